! libebb from Fortran (use ebb): registration, three safe points, a periodic checkpoint every 2.
program ebb_fortran
  use ebb
  use iso_c_binding
  implicit none
  integer :: resumed, rank, size, old, ierr, i
  real(8), target :: u(10)
  integer(8), target :: it
  call ebb_init(resumed, rank, size, old, ierr)
  u = rank
  it = 0
  do i = 1, 3
    call ebb_register('u', c_loc(u), 8_8, EBB_BLOCK, int(10 * size, 8), 1_8, 0, 0, 0, 0, ierr)
    call ebb_register_state(c_loc(it), 8_8, ierr)
    if (ebb_probe_adapt() /= 0) call ebb_adapt(ierr)
    it = it + 1
  end do
  print '(a,i0,a,i0,a,i0,a,i0)', 'fortran rank=', rank, ' size=', size, ' resumed=', resumed, ' ierr=', ierr
  call ebb_finalize(ierr)
end program
