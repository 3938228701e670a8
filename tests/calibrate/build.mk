# tests/calibrate: pvas-calibrate writes the cost model's parameters into an
# MCA parameter file that Open MPI reads (ompi-btl/calibrate/README.md).
TEST_SUITES += tests/calibrate/check.sh tests/calibrate/fit.py
