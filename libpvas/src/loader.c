// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ELF loading into a partition.  Mirrors what fs/binfmt_elf.c does for an
 * ET_DYN program with an interpreter, minus everything that only the kernel
 * can do (credentials, mm layout fields).  No heap, no errno reliance: this
 * runs in the clone(CLONE_VM) child while the root's thread is parked.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "loader.h"

#define PAGE 4096UL
#define ALIGN_DOWN(x, a) ((x) & ~((uintptr_t)(a)-1))
#define ALIGN_UP(x, a) ALIGN_DOWN((x) + (a)-1, (a))

struct image {
	int fd;
	Elf64_Ehdr eh;
	Elf64_Phdr ph[PVAS_MAX_PHNUM];
	uintptr_t min_vaddr, max_vaddr, align;
	uintptr_t bias;
	uintptr_t phdr_addr; /* AT_PHDR */
};

static int fail(struct pvas_load_error *e, const char *op, const char *obj, int err)
{
	size_t n = strlen(op);

	e->err = err;
	if (n >= sizeof(e->op))
		n = sizeof(e->op) - 1;
	memcpy(e->op, op, n);
	e->op[n] = 0;
	n = obj ? strlen(obj) : 0;
	if (n >= sizeof(e->object))
		n = sizeof(e->object) - 1;
	if (n)
		memcpy(e->object, obj, n);
	e->object[n] = 0;
	return -1;
}

static int read_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, off + (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENOEXEC; /* truncated file */
		done += (size_t)r;
	}
	return 0;
}

/* Open and validate an ELF file; what: "program" or "interpreter". */
static int open_image(struct image *im, const char *path, int is_interp,
		      struct pvas_load_error *e)
{
	const char *op_open = is_interp ? "open interpreter" : "open";
	const char *op_elf = is_interp ? "load interpreter" : "load ELF";
	size_t phsize;
	int r, i, nload = 0;

	im->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (im->fd < 0)
		return fail(e, op_open, path, errno);
	r = read_full(im->fd, &im->eh, sizeof(im->eh), 0);
	if (r)
		return fail(e, r == -ENOEXEC ? "load ELF (file too short for an ELF header)" : op_elf,
			    path, -r);
	if (memcmp(im->eh.e_ident, ELFMAG, SELFMAG) != 0)
		return fail(e, "load ELF (no ELF magic)", path, ENOEXEC);
	if (im->eh.e_ident[EI_CLASS] != ELFCLASS64 || im->eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    im->eh.e_machine != EM_X86_64 || im->eh.e_version != EV_CURRENT)
		return fail(e, "load ELF (not an x86-64 ELF64 file)", path, ENOEXEC);
	if (im->eh.e_type == ET_EXEC)
		return fail(e,
			    "load ELF (not a PIE: position-dependent executable; rebuild with "
			    "-fPIE -pie, or -static-pie for a static program)",
			    path, ENOEXEC);
	if (im->eh.e_type != ET_DYN)
		return fail(e, "load ELF (not an executable)", path, ENOEXEC);
	if (im->eh.e_phentsize != sizeof(Elf64_Phdr) || im->eh.e_phnum == 0 ||
	    im->eh.e_phnum > PVAS_MAX_PHNUM)
		return fail(e, "load ELF (bad program header table)", path, ENOEXEC);
	phsize = (size_t)im->eh.e_phnum * sizeof(Elf64_Phdr);
	if (im->eh.e_phoff > (Elf64_Off)INT64_MAX - phsize)
		return fail(e, "load ELF (bad program header offset)", path, ENOEXEC);
	r = read_full(im->fd, im->ph, phsize, (off_t)im->eh.e_phoff);
	if (r)
		return fail(e, "load ELF (truncated program headers)", path, -r);

	im->min_vaddr = UINTPTR_MAX;
	im->max_vaddr = 0;
	im->align = PAGE;
	im->phdr_addr = 0;
	for (i = 0; i < im->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &im->ph[i];

		if (p->p_type != PT_LOAD)
			continue;
		nload++;
		if (p->p_filesz > p->p_memsz || p->p_memsz > (1UL << 40) || p->p_vaddr > (1UL << 40) ||
		    p->p_offset > (1UL << 40) ||
		    (p->p_offset & (PAGE - 1)) != (p->p_vaddr & (PAGE - 1)))
			return fail(e, "load ELF (bad PT_LOAD segment)", path, ENOEXEC);
		if (p->p_align > im->align) {
			if (p->p_align & (p->p_align - 1) || p->p_align > (1UL << 30))
				return fail(e, "load ELF (bad segment alignment)", path, ENOEXEC);
			im->align = p->p_align;
		}
		if (ALIGN_DOWN(p->p_vaddr, PAGE) < im->min_vaddr)
			im->min_vaddr = ALIGN_DOWN(p->p_vaddr, PAGE);
		if (ALIGN_UP(p->p_vaddr + p->p_memsz, PAGE) > im->max_vaddr)
			im->max_vaddr = ALIGN_UP(p->p_vaddr + p->p_memsz, PAGE);
	}
	if (!nload)
		return fail(e, "load ELF (no loadable segment)", path, ENOEXEC);
	return 0;
}

static int map_image(struct image *im, uintptr_t at, int map_flag, const char *path,
		     struct pvas_load_error *e)
{
	uintptr_t span = im->max_vaddr - im->min_vaddr;
	void *p;
	int i;

	im->bias = at - im->min_vaddr;
	/* Reserve the whole span once: the only mapping that uses map_flag,
	 * so segments below can be placed with MAP_FIXED inside our own span. */
	p = mmap((void *)at, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | map_flag,
		 -1, 0);
	if (p == MAP_FAILED)
		return fail(e, "mmap (reserve image span)", path, errno);
	if ((uintptr_t)p != at)
		return fail(e, "mmap (reserve image span: address taken)", path, EEXIST);

	for (i = 0; i < im->eh.e_phnum; i++) {
		const Elf64_Phdr *ph = &im->ph[i];
		uintptr_t start = ALIGN_DOWN(im->bias + ph->p_vaddr, PAGE);
		uintptr_t file_end = im->bias + ph->p_vaddr + ph->p_filesz;
		uintptr_t mem_end = ALIGN_UP(im->bias + ph->p_vaddr + ph->p_memsz, PAGE);
		uintptr_t file_map_end = ALIGN_UP(file_end, PAGE);
		int prot = 0;

		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_flags & PF_R)
			prot |= PROT_READ;
		if (ph->p_flags & PF_W)
			prot |= PROT_WRITE;
		if (ph->p_flags & PF_X)
			prot |= PROT_EXEC;
		if (ph->p_offset <= im->eh.e_phoff &&
		    im->eh.e_phoff + (uint64_t)im->eh.e_phnum * sizeof(Elf64_Phdr) <=
			    ph->p_offset + ph->p_filesz)
			im->phdr_addr = im->bias + ph->p_vaddr + (im->eh.e_phoff - ph->p_offset);

		if (ph->p_filesz) {
			/* Writable while we clear the tail of the last file page. */
			int fprot = prot | (ph->p_memsz > ph->p_filesz ? PROT_WRITE : 0);

			p = mmap((void *)start, file_map_end - start, fprot, MAP_PRIVATE | MAP_FIXED,
				 im->fd, (off_t)ALIGN_DOWN(ph->p_offset, PAGE));
			if (p == MAP_FAILED)
				return fail(e, "mmap (segment)", path, errno);
			if (file_map_end > file_end && ph->p_memsz > ph->p_filesz)
				memset((void *)file_end, 0, file_map_end - file_end);
			if (fprot != prot && mprotect((void *)start, file_map_end - start, prot))
				return fail(e, "mprotect (segment)", path, errno);
		} else {
			file_map_end = start;
		}
		if (mem_end > file_map_end) {
			p = mmap((void *)file_map_end, mem_end - file_map_end, prot,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			if (p == MAP_FAILED)
				return fail(e, "mmap (bss)", path, errno);
		}
	}
	for (i = 0; i < im->eh.e_phnum; i++)
		if (im->ph[i].p_type == PT_PHDR)
			im->phdr_addr = im->bias + im->ph[i].p_vaddr;
	return 0;
}

/* Is [vaddr, vaddr + size) inside a readable PT_LOAD of the image? */
static int readable(const struct image *im, uint64_t vaddr, uint64_t size)
{
	int i;

	for (i = 0; i < im->eh.e_phnum; i++) {
		const Elf64_Phdr *ph = &im->ph[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && vaddr >= ph->p_vaddr &&
		    size <= ph->p_memsz && vaddr - ph->p_vaddr <= ph->p_memsz - size)
			return 1;
	}
	return 0;
}

/*
 * Programs built with a sanitizer whose shadow memory is one fixed region
 * per address space cannot be tasks: it is the root's (or nobody's).
 * Recognised by the runtime in DT_NEEDED (gcc and clang link it
 * dynamically by default).  Runs on the mapped image.
 */
static int check_sanitizer(const struct image *im, const char *path, struct pvas_load_error *e)
{
	static const struct {
		const char *lib, *name, *flag;
	} rt[] = {
		{ "libasan.so", "AddressSanitizer", "-fsanitize=address" },
		{ "libhwasan.so", "HWAddressSanitizer", "-fsanitize=hwaddress" },
		{ "libtsan.so", "ThreadSanitizer", "-fsanitize=thread" },
	};
	const Elf64_Dyn *dyn = NULL;
	uint64_t ndyn = 0, strtab = 0, strsz = 0, k;
	char op[sizeof(e->op)];
	size_t r;
	int i;

	for (i = 0; i < im->eh.e_phnum; i++)
		if (im->ph[i].p_type == PT_DYNAMIC &&
		    readable(im, im->ph[i].p_vaddr, im->ph[i].p_memsz)) {
			dyn = (const Elf64_Dyn *)(im->bias + im->ph[i].p_vaddr);
			ndyn = im->ph[i].p_memsz / sizeof(*dyn);
		}
	for (k = 0; k < ndyn && dyn[k].d_tag != DT_NULL; k++) {
		if (dyn[k].d_tag == DT_STRTAB)
			strtab = dyn[k].d_un.d_ptr;
		else if (dyn[k].d_tag == DT_STRSZ)
			strsz = dyn[k].d_un.d_val;
	}
	if (!strtab || !strsz || !readable(im, strtab, strsz))
		return 0;
	for (k = 0; k < ndyn && dyn[k].d_tag != DT_NULL; k++) {
		const char *name = (const char *)(im->bias + strtab + dyn[k].d_un.d_val);

		if (dyn[k].d_tag != DT_NEEDED || dyn[k].d_un.d_val >= strsz)
			continue;
		for (r = 0; r < sizeof(rt) / sizeof(rt[0]); r++) {
			size_t n = strlen(rt[r].lib);

			if (dyn[k].d_un.d_val + n > strsz || strncmp(name, rt[r].lib, n))
				continue;
			snprintf(op, sizeof(op),
				 "load ELF (built with %s, whose shadow memory is one per address "
				 "space; rebuild without %s)",
				 rt[r].name, rt[r].flag);
			return fail(e, op, path, ENOEXEC);
		}
	}
	return 0;
}

static int has_phdr(const struct image *im, uint32_t type)
{
	int i;

	for (i = 0; i < im->eh.e_phnum; i++)
		if (im->ph[i].p_type == type)
			return 1;
	return 0;
}

/* Read PT_INTERP into buf; 1 if present, 0 if none, -1 on error. */
static int read_interp(struct image *im, char *buf, size_t len, const char *path,
		       struct pvas_load_error *e)
{
	int i, r;

	for (i = 0; i < im->eh.e_phnum; i++) {
		const Elf64_Phdr *ph = &im->ph[i];

		if (ph->p_type != PT_INTERP)
			continue;
		if (ph->p_filesz < 2 || ph->p_filesz > len)
			return fail(e, "load ELF (bad PT_INTERP)", path, ENOEXEC);
		r = read_full(im->fd, buf, ph->p_filesz, (off_t)ph->p_offset);
		if (r)
			return fail(e, "load ELF (truncated PT_INTERP)", path, -r);
		if (buf[ph->p_filesz - 1] != 0 || strlen(buf) != ph->p_filesz - 1)
			return fail(e, "load ELF (bad PT_INTERP)", path, ENOEXEC);
		return 1;
	}
	return 0;
}

static size_t vec_bytes(char *const *v, size_t *count)
{
	size_t n = 0, bytes = 0;

	for (; v && v[n]; n++)
		bytes += strlen(v[n]) + 1;
	*count = n;
	return bytes;
}

#define NAUXV 24

size_t pvas_stack_bytes(char *const *argv, char *const *envp, const char *path)
{
	size_t argc, envc, bytes;

	bytes = vec_bytes(argv, &argc) + vec_bytes(envp, &envc) + strlen(path) + 1;
	bytes += 16 + 16 + 64; /* AT_RANDOM, platform, alignment */
	bytes += (1 + argc + 1 + envc + 1 + 2 * NAUXV) * sizeof(uintptr_t);
	return bytes;
}

/* Copy a string downwards from *top; returns its address. */
static uintptr_t push_str(uintptr_t *top, const char *s)
{
	size_t n = strlen(s) + 1;

	*top -= n;
	memcpy((void *)*top, s, n);
	return *top;
}

static int build_stack(const struct pvas_load_req *req, struct image *prog, uintptr_t interp_base,
		       struct pvas_load_result *res, struct pvas_load_error *e)
{
	uintptr_t top = res->stack_hi, rnd, plat, execfn, *sp;
	size_t argc, envc, i, words;
	unsigned char random[16];
	uintptr_t aux[2 * NAUXV], *a = aux;

	if (getrandom(random, sizeof(random), 0) != (ssize_t)sizeof(random))
		return fail(e, "getrandom (AT_RANDOM)", req->path, errno ? errno : EIO);
	vec_bytes(req->argv, &argc);
	vec_bytes(req->envp, &envc);
	if (pvas_stack_bytes(req->argv, req->envp, req->path) > req->stack_size / 4)
		return fail(e, "build stack (argv + envp too large)", req->path, E2BIG);

	top -= sizeof(random);
	memcpy((void *)top, random, sizeof(random));
	rnd = top;
	plat = push_str(&top, "x86_64");
	execfn = push_str(&top, req->path);

	/* Strings: argv then envp in ascending order, like the kernel; the
	 * pointer vectors below walk them upwards from top. */
	for (i = envc; i-- > 0;)
		push_str(&top, req->envp[i]);
	for (i = argc; i-- > 0;)
		push_str(&top, req->argv[i]);

#define AUX(t, v)                                                                                  \
	do {                                                                                       \
		*a++ = (t);                                                                        \
		*a++ = (uintptr_t)(v);                                                             \
	} while (0)
	AUX(AT_SYSINFO_EHDR, getauxval(AT_SYSINFO_EHDR));
	AUX(AT_MINSIGSTKSZ, getauxval(AT_MINSIGSTKSZ));
	AUX(AT_HWCAP, getauxval(AT_HWCAP));
	AUX(AT_PAGESZ, PAGE);
	AUX(AT_CLKTCK, getauxval(AT_CLKTCK));
	AUX(AT_PHDR, prog->phdr_addr);
	AUX(AT_PHENT, sizeof(Elf64_Phdr));
	AUX(AT_PHNUM, prog->eh.e_phnum);
	AUX(AT_BASE, interp_base);
	AUX(AT_FLAGS, 0);
	AUX(AT_ENTRY, prog->bias + prog->eh.e_entry);
	AUX(AT_UID, getuid());
	AUX(AT_EUID, geteuid());
	AUX(AT_GID, getgid());
	AUX(AT_EGID, getegid());
	AUX(AT_SECURE, 0);
	AUX(AT_RANDOM, rnd);
	AUX(AT_HWCAP2, getauxval(AT_HWCAP2));
	AUX(AT_EXECFN, execfn);
	AUX(AT_PLATFORM, plat);
	AUX(AT_NULL, 0);
#undef AUX
	words = 1 + argc + 1 + envc + 1 + (size_t)(a - aux);
	sp = (uintptr_t *)ALIGN_DOWN(top - words * sizeof(uintptr_t), 16);
	res->sp = (uintptr_t)sp;

	*sp++ = argc;
	for (i = 0; i < argc; i++) {
		*sp++ = top;
		top += strlen((const char *)top) + 1;
	}
	*sp++ = 0;
	for (i = 0; i < envc; i++) {
		*sp++ = top;
		top += strlen((const char *)top) + 1;
	}
	*sp++ = 0;
	memcpy(sp, aux, (size_t)(a - aux) * sizeof(uintptr_t));
	return 0;
}

int pvas_load(const struct pvas_load_req *req, struct pvas_load_result *res,
	      struct pvas_load_error *e)
{
	static const size_t gap = 1UL << 20;
	struct image prog = { .fd = -1 }, interp = { .fd = -1 };
	char interp_path[PATH_MAX];
	uintptr_t at, limit;
	int has_interp, rc = -1;
	void *p;

	memset(res, 0, sizeof(*res));
	e->err = 0;
	if (req->stack_size < (64UL << 10) || req->stack_size > PVAS_MAX_STACK)
		return fail(e, "load (stack size out of range)", req->path, EINVAL);
	res->stack_hi = req->hi - PVAS_PART_HIGH_GUARD;
	res->stack_lo = res->stack_hi - ALIGN_UP(req->stack_size, PAGE);
	limit = res->stack_lo - gap;

	if (open_image(&prog, req->path, 0, e))
		goto out;
	has_interp = read_interp(&prog, interp_path, sizeof(interp_path), req->path, e);
	if (has_interp < 0)
		goto out;
	if (has_interp && open_image(&interp, interp_path, 1, e))
		goto out;
	if (has_interp && has_phdr(&interp, PT_INTERP)) {
		fail(e, "load interpreter (has its own PT_INTERP)", interp_path, ELIBBAD);
		goto out;
	}

	at = ALIGN_UP(req->lo + PVAS_PART_LOW_GUARD, prog.align);
	if (at + (prog.max_vaddr - prog.min_vaddr) > limit) {
		fail(e, "load (program larger than its partition)", req->path, EFBIG);
		goto out;
	}
	if (map_image(&prog, at, req->map_flag, req->path, e) ||
	    check_sanitizer(&prog, req->path, e))
		goto out;
	res->prog_base = prog.bias;
	res->entry = prog.bias + prog.eh.e_entry;
	if (has_interp) {
		at = ALIGN_UP(at + (prog.max_vaddr - prog.min_vaddr) + gap, interp.align);
		if (at + (interp.max_vaddr - interp.min_vaddr) > limit) {
			fail(e, "load (interpreter does not fit in the partition)", interp_path,
			     EFBIG);
			goto out;
		}
		if (map_image(&interp, at, req->map_flag, interp_path, e))
			goto out;
		res->interp_base = interp.bias;
		res->entry = interp.bias + interp.eh.e_entry;
	}
	if (!prog.phdr_addr) {
		fail(e, "load ELF (program headers not in a loaded segment)", req->path, ENOEXEC);
		goto out;
	}

	p = mmap((void *)res->stack_lo, res->stack_hi - res->stack_lo, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | req->map_flag, -1, 0);
	if (p == MAP_FAILED) {
		fail(e, "mmap (initial stack)", req->path, errno);
		goto out;
	}
	if (build_stack(req, &prog, res->interp_base, res, e))
		goto out;
	rc = 0;
out:
	if (prog.fd >= 0)
		close(prog.fd);
	if (interp.fd >= 0)
		close(interp.fd);
	return rc;
}

_Noreturn void pvas_enter(uintptr_t entry, uintptr_t sp)
{
	/* The x86-64 process entry state: rsp at argc, rdx = 0 (no atexit
	 * function from the "kernel"), other registers cleared.  entry is
	 * pinned to r15, the one register the sequence does not clear. */
	register uintptr_t r15 __asm__("r15") = entry;

	__asm__ volatile("mov %0, %%rsp\n\t"
			 "xor %%edx, %%edx\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "xor %%eax, %%eax\n\t"
			 "xor %%ebx, %%ebx\n\t"
			 "xor %%ecx, %%ecx\n\t"
			 "xor %%esi, %%esi\n\t"
			 "xor %%edi, %%edi\n\t"
			 "xor %%r8d, %%r8d\n\t"
			 "xor %%r9d, %%r9d\n\t"
			 "xor %%r10d, %%r10d\n\t"
			 "xor %%r11d, %%r11d\n\t"
			 "xor %%r12d, %%r12d\n\t"
			 "xor %%r13d, %%r13d\n\t"
			 "xor %%r14d, %%r14d\n\t"
			 "jmp *%%r15\n\t"
			 :
			 : "r"(sp), "r"(r15)
			 : "memory");
	__builtin_unreachable();
}
