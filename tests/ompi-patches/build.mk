# tests/ompi-patches: the Open MPI hook series regenerates byte for byte and
# applies to the pristine 4.1.4 tarball (ompi-btl/make-patches --check).
TEST_SUITES += tests/ompi-patches/check.sh
