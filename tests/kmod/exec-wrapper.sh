#!/bin/sh
# tests/kmod/exec-wrapper.sh PROGRAM [ARGS...]: a cluster-style wrapper
# script (sets up the environment, then execs the MPI program); the guest
# MPI suite launches ranks through it to check that they still become
# kernel-placed PVAS tasks (docs/ompi-launch.md, wrapper scripts).
export PVAS_TEST_WRAPPED=1
exec "$@"
