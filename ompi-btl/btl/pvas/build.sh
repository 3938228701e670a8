#!/usr/bin/env bash
# ompi-btl/btl/pvas/build.sh PREFIX : build btl/pvas out of tree against the
# Open MPI installed in PREFIX (configured --with-devel-headers) and install
# PREFIX/lib/openmpi/mca_btl_pvas.so.
#
# Compiles with PREFIX's opal_config.h and devel headers (-isystem, so that
# warnings are ours only), -std=gnu11 -Wall -Wextra -Werror; links against
# PREFIX's libopen-pal and links libpvas STATICALLY (build/lib/libpvas.a,
# PIC; its symbols are made local with --exclude-libs so that a program that
# itself uses libpvas keeps its own copy).  Incremental: does nothing when the
# installed .so is newer than every source, this script and libpvas.a.
# Called by scripts/build-ompi after every run; may be run by hand.
#
# Environment: BUILD (default <repo>/build): objects go to
# $BUILD/ompi-btl/pvas, libpvas.a is taken from $BUILD/lib (built with make
# if missing).  CC (default gcc).  PVAS_BTL_FORCE=1 rebuilds.
set -euo pipefail

die() {
	echo "btl/pvas build.sh: $*" >&2
	exit 1
}

[ $# -eq 1 ] || die "usage: $0 PREFIX"
PREFIX=$(cd "$1" && pwd) || die "no such prefix: $1"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
CC=${CC:-gcc}
OBJDIR=$BUILD/ompi-btl/pvas
LIBPVAS_A=$BUILD/lib/libpvas.a
INC=$PREFIX/include/openmpi
DEST=$PREFIX/lib/openmpi
SO=$DEST/mca_btl_pvas.so

[ -f "$INC/opal_config.h" ] || die "$INC/opal_config.h missing (Open MPI not built --with-devel-headers?)"
[ -f "$INC/opal/mca/btl/btl.h" ] || die "$INC/opal/mca/btl/btl.h missing"
grep -q MCA_BTL_FLAGS_SHARED_ADDR_SPACE "$INC/opal/mca/btl/btl.h" ||
	die "btl.h lacks MCA_BTL_FLAGS_SHARED_ADDR_SPACE (hook 0001 not applied?)"

if [ ! -f "$LIBPVAS_A" ]; then
	make -C "$ROOT" --no-print-directory "BUILD=$BUILD" "$LIBPVAS_A" >&2 ||
		die "cannot build $LIBPVAS_A"
fi

SRCS=("$HERE"/btl_pvas_*.c)
HDRS=("$HERE"/btl_pvas*.h "$ROOT/include/pvas.h")

if [ -f "$SO" ] && [ "${PVAS_BTL_FORCE:-0}" != 1 ]; then
	stale=0
	for f in "${SRCS[@]}" "${HDRS[@]}" "$LIBPVAS_A" "$HERE/build.sh" "$INC/opal_config.h"; do
		if [ "$f" -nt "$SO" ]; then
			stale=1
			break
		fi
	done
	[ $stale = 1 ] || exit 0
fi

mkdir -p "$OBJDIR"
CFLAGS=(-std=gnu11 -O2 -g -fPIC -fvisibility=hidden
	-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
	-isystem "$INC" -isystem "$PREFIX/include"
	-I"$HERE" -I"$ROOT/include")
# Open MPI's own build uses -mcx16 on x86-64: its inline 128-bit atomics
# (opal/sys/gcc_builtin/atomic.h) need cmpxchg16b.
if [ "$(uname -m)" = x86_64 ]; then
	CFLAGS+=(-mcx16)
fi
objs=()
for src in "${SRCS[@]}"; do
	obj=$OBJDIR/$(basename "${src%.c}").o
	"$CC" "${CFLAGS[@]}" -c -o "$obj" "$src"
	objs+=("$obj")
done
# Only the component structure is exported (OPAL_MODULE_DECLSPEC).
"$CC" -shared -o "$OBJDIR/mca_btl_pvas.so" "${objs[@]}" "$LIBPVAS_A" \
	-Wl,--exclude-libs,ALL -Wl,-z,defs \
	-L"$PREFIX/lib" -Wl,-rpath,"$PREFIX/lib" -lopen-pal -lpthread
install -d "$DEST"
install -m 755 "$OBJDIR/mca_btl_pvas.so" "$SO.tmp"
mv -f "$SO.tmp" "$SO"
echo "btl/pvas: installed $SO"
