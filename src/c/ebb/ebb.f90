! The Fortran interface of libebb (ebb.h says what each call does): `use ebb`, built by `ebb mpif90`.
!
!   call ebb_init(resumed, rank, size, old_size, ierr)
!   if (resumed /= 0) then
!     call ebb_restored('u', p, n, pr, pc, ierr); call c_f_pointer(p, u, [n]); call ebb_restored_state(st, ierr)
!   end if
!   do
!     call ebb_register('u', c_loc(u), 8_8, EBB_BLOCK, rows, cols, 0, 0, 0, 0, ierr)
!     call ebb_register_state(c_loc(st), int(c_sizeof(st), 8), ierr)
!     if (ebb_probe_adapt() /= 0) call ebb_adapt(ierr)
!     ... one iteration ...
!   end do
!   call ebb_finalize(ierr)
module ebb
  use iso_c_binding
  implicit none
  private
  integer(c_int), parameter, public :: EBB_BLOCK = 1, EBB_BLOCK_CYCLIC_2D = 2, EBB_EXIT_RESTART = 75
  public :: ebb_init, ebb_register, ebb_register_state, ebb_probe_adapt, ebb_adapt, ebb_checkpoint_every
  public :: ebb_restored, ebb_restored_state, ebb_free, ebb_finalize, ebb_grid

  interface
    integer(c_int) function c_init(resumed, rank, size, old_size) bind(C, name="ebb_init_f")
      import :: c_int
      integer(c_int), intent(out) :: resumed, rank, size, old_size
    end function
    integer(c_int) function c_register(name, data, elem, layout, rows, cols, mb, nb, pr, pc) bind(C, name="ebb_register_f")
      import :: c_int, c_char, c_ptr, c_long_long
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: data
      integer(c_long_long), value :: elem, rows, cols
      integer(c_int), value :: layout, mb, nb, pr, pc
    end function
    integer(c_int) function c_register_state(state, bytes) bind(C, name="ebb_register_state")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: state
      integer(c_size_t), value :: bytes
    end function
    integer(c_int) function ebb_probe_adapt() bind(C, name="ebb_probe_adapt")
      import :: c_int
    end function
    integer(c_int) function c_adapt() bind(C, name="ebb_adapt")
      import :: c_int
    end function
    integer(c_int) function c_every(n) bind(C, name="ebb_checkpoint_every")
      import :: c_int
      integer(c_int), value :: n
    end function
    integer(c_int) function c_restored(name, data, count, pr, pc) bind(C, name="ebb_restored_f")
      import :: c_int, c_char, c_ptr, c_long_long
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), intent(out) :: data
      integer(c_long_long), intent(out) :: count
      integer(c_int), intent(out) :: pr, pc
    end function
    integer(c_int) function c_restored_state(state, bytes) bind(C, name="ebb_restored_state_f")
      import :: c_int, c_ptr, c_long_long
      type(c_ptr), value :: state
      integer(c_long_long), value :: bytes
    end function
    subroutine c_free(data) bind(C, name="ebb_free_f")
      import :: c_ptr
      type(c_ptr), value :: data
    end subroutine
    integer(c_int) function c_finalize() bind(C, name="ebb_finalize")
      import :: c_int
    end function
    subroutine c_grid(size, pr, pc) bind(C, name="ebb_grid")
      import :: c_int
      integer(c_int), value :: size
      integer(c_int), intent(out) :: pr, pc
    end subroutine
  end interface

contains

  subroutine ebb_init(resumed, rank, size, old_size, ierr)
    integer, intent(out) :: resumed, rank, size, old_size, ierr
    integer(c_int) :: a, b, c, d
    ierr = c_init(a, b, c, d)
    resumed = a; rank = b; size = c; old_size = d
  end subroutine

  subroutine ebb_register(name, data, elem, layout, rows, cols, mb, nb, pr, pc, ierr)
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: data
    integer(8), intent(in) :: elem, rows, cols
    integer, intent(in) :: layout, mb, nb, pr, pc
    integer, intent(out) :: ierr
    ierr = c_register(trim(name)//c_null_char, data, int(elem, c_long_long), int(layout, c_int), int(rows, c_long_long), &
                      int(cols, c_long_long), int(mb, c_int), int(nb, c_int), int(pr, c_int), int(pc, c_int))
  end subroutine

  subroutine ebb_register_state(state, bytes, ierr)
    type(c_ptr), intent(in) :: state
    integer(8), intent(in) :: bytes
    integer, intent(out) :: ierr
    ierr = c_register_state(state, int(bytes, c_size_t))
  end subroutine

  subroutine ebb_adapt(ierr)
    integer, intent(out) :: ierr
    ierr = c_adapt()
  end subroutine

  subroutine ebb_checkpoint_every(n, ierr)
    integer, intent(in) :: n
    integer, intent(out) :: ierr
    ierr = c_every(int(n, c_int))
  end subroutine

  !> The restored array `name` (this rank's `count` elements, malloc'd: give it back with ebb_free) and the 2-D grid.
  subroutine ebb_restored(name, data, count, pr, pc, ierr)
    character(len=*), intent(in) :: name
    type(c_ptr), intent(out) :: data
    integer(8), intent(out) :: count
    integer, intent(out) :: pr, pc, ierr
    integer(c_long_long) :: n
    integer(c_int) :: r, c
    ierr = c_restored(trim(name)//c_null_char, data, n, r, c)
    count = n; pr = r; pc = c
  end subroutine

  subroutine ebb_restored_state(state, bytes, ierr)
    type(c_ptr), intent(in) :: state
    integer(8), intent(in) :: bytes
    integer, intent(out) :: ierr
    ierr = c_restored_state(state, int(bytes, c_long_long))
  end subroutine

  subroutine ebb_free(data)
    type(c_ptr), intent(in) :: data
    call c_free(data)
  end subroutine

  subroutine ebb_finalize(ierr)
    integer, intent(out) :: ierr
    ierr = c_finalize()
  end subroutine

  subroutine ebb_grid(size, pr, pc)
    integer, intent(in) :: size
    integer, intent(out) :: pr, pc
    integer(c_int) :: r, c
    call c_grid(int(size, c_int), r, c)
    pr = r; pc = c
  end subroutine
end module ebb
