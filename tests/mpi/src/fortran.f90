! SPDX-License-Identifier: LGPL-2.1-or-later
! Fortran smoke test: hello from every rank, then an allreduce.
program fortran_smoke
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, total, expected
  integer :: buf(1000), res(1000), i, bad

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, 1000
     buf(i) = i * (rank + 1)
  end do
  call MPI_Allreduce(buf, res, 1000, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  expected = nprocs * (nprocs + 1) / 2
  bad = 0
  do i = 1, 1000
     if (res(i) /= i * expected) bad = bad + 1
  end do
  if (total /= expected) bad = bad + 1
  call MPI_Allreduce(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
     write (*, '(a,i0,a,i0)') 'fortran np=', nprocs, ' sum=', total
     if (bad == 0) then
        write (*, '(a)') 'fortran: PASS'
     else
        write (*, '(a,i0,a)') 'fortran: FAIL (', bad, ' errors)'
     end if
  end if
  call MPI_Finalize(ierr)
  if (bad /= 0) stop 1
end program fortran_smoke
