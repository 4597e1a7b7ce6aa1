// opgen kernel runtime, Rust side: what an LLM-written Rust kernel sees. Hand-written,
// versioned with opgen; the counterpart of opgen_kernel.hpp.
//
// A kernel is a safe Rust function in module `kernel`, compiled under
// `#![forbid(unsafe_code)]`. It takes inputs as `&TensorRef<T>` (strided views, possibly
// non-contiguous, with stride 0 where opgen broadcast them) and idiomatic scalars
// (`i64`, `f64`, `bool`, `&str`, `&[T]`), writes a tensor result into the caller's
// contiguous `&mut TensorMut<T>` or returns its result, and reports the errors Python
// would raise as `Err(Error)`. Kernels import these names with
// `use opgen::{Error, ErrorKind, Result, TensorMut, TensorRef};`.
//
// This file holds the only `unsafe` code of a Rust kernel library: the views below turn
// the C caller's DLPack tensors into safe types, after `shim` has checked everything a C
// caller could get wrong (null pointers, dtype, rank, negative sizes, alignment, bool
// bytes that are not 0 or 1, an output that overlaps an input). Every access through a
// view is bounds-checked or proven in range by construction.

#![allow(dead_code)]

use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// The most dims a tensor may have (OPGEN_MAX_DIMS).
pub const MAX_DIMS: usize = 8;

/// The Python exception a kernel raises; values match opgen_error_kind in opgen_abi.h.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Overflow = 1,
    ZeroDivision = 2,
    Value = 3,
    Internal = 4,
    Index = 5,
}

/// An error a kernel returns: the shim turns it into the status code and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into() }
    }
    pub fn overflow(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Overflow, message)
    }
    pub fn zero_division(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ZeroDivision, message)
    }
    pub fn value(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Value, message)
    }
    pub fn index(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Index, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

impl std::error::Error for Error {}

/// What every kernel returns.
pub type Result<T> = std::result::Result<T, Error>;

/// Element types a tensor may hold, with their DLPack dtype (code, bits).
pub trait Element: Copy + Default + PartialEq + PartialOrd + fmt::Debug + Send + Sync + 'static {
    const DL_CODE: u8;
    const BITS: u8;
}

macro_rules! element {
    ($($t:ty => $code:expr, $bits:expr;)*) => {
        $(impl Element for $t {
            const DL_CODE: u8 = $code;
            const BITS: u8 = $bits;
        })*
    };
}

// DLPack codes: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBool 6.
element! {
    f32 => 2, 32; f64 => 2, 64;
    i8 => 0, 8; i16 => 0, 16; i32 => 0, 32; i64 => 0, 64;
    u8 => 1, 8; u16 => 1, 16; u32 => 1, 32; u64 => 1, 64; bool => 6, 8;
}

/// How many worker threads a kernel should use at most (where its spec allows threads):
/// `OMP_NUM_THREADS` when it is set to a positive number (its first entry, as OpenMP reads
/// it, so one setting governs C++ and Rust kernels alike: the verifier runs threaded kernels
/// with 1 thread and with more threads than cores); otherwise the CPUs this process may run on.
pub fn max_threads() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        omp_num_threads()
            .and_then(|v| v.split(',').next().and_then(|n| n.trim().parse::<usize>().ok()))
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
    })
}

/// `OMP_NUM_THREADS`, read with libc's getenv rather than `std::env`: the library audit compares
/// the std code a kernel pulls in with a baseline built from this runtime, and a runtime that
/// used `std::env` would put it in every threaded baseline, hiding a kernel's own use of it.
fn omp_num_threads() -> Option<String> {
    extern "C" {
        fn getenv(name: *const std::os::raw::c_char) -> *const std::os::raw::c_char;
    }
    // SAFETY: the name is a NUL-terminated literal; getenv returns NULL or a NUL-terminated
    // string that stays valid while nobody changes the environment (no kernel may).
    let value = unsafe { getenv(b"OMP_NUM_THREADS\0".as_ptr().cast()) };
    if value.is_null() {
        return None;
    }
    let text = unsafe { std::ffi::CStr::from_ptr(value) };
    text.to_str().ok().map(str::to_owned)
}

// ---------------------------------------------------------------------------------------
// Layout: sizes and strides (in elements) of a view.

#[derive(Clone, Copy, Debug)]
struct Layout {
    ndim: usize,
    shape: [usize; MAX_DIMS],
    strides: [isize; MAX_DIMS],
}

impl Layout {
    fn numel(&self) -> usize {
        self.shape[..self.ndim].iter().product()
    }

    fn is_contiguous(&self) -> bool {
        if self.numel() == 0 {
            return true; // nothing to lay out; NumPy reports arbitrary strides here
        }
        let mut expect = 1isize;
        for d in (0..self.ndim).rev() {
            if self.shape[d] != 1 && self.strides[d] != expect {
                return false;
            }
            expect *= self.shape[d] as isize;
        }
        true
    }

    /// Offset (in elements) of `index`; panics with a message naming the bad index.
    fn offset(&self, index: &[usize]) -> isize {
        assert!(
            index.len() == self.ndim,
            "index {:?} has {} entries but the tensor has {} dims",
            index,
            index.len(),
            self.ndim
        );
        let mut off = 0isize;
        for d in 0..self.ndim {
            assert!(
                index[d] < self.shape[d],
                "index {:?} is out of bounds for shape {:?}",
                index,
                &self.shape[..self.ndim]
            );
            off += index[d] as isize * self.strides[d];
        }
        off
    }

    /// Offset of the lane along `axis` at `others` (the index in every other dim).
    fn lane_offset(&self, axis: usize, others: &[usize]) -> isize {
        assert!(axis < self.ndim, "axis {} is out of range for a tensor of {} dims", axis, self.ndim);
        assert!(
            others.len() + 1 == self.ndim,
            "a lane along axis {} of a {}-dim tensor is named by {} indices, not {}",
            axis,
            self.ndim,
            self.ndim - 1,
            others.len()
        );
        let mut off = 0isize;
        let mut k = 0;
        for d in 0..self.ndim {
            if d == axis {
                continue;
            }
            assert!(
                others[k] < self.shape[d],
                "lane index {:?} is out of bounds in dim {} (size {})",
                others,
                d,
                self.shape[d]
            );
            off += others[k] as isize * self.strides[d];
            k += 1;
        }
        off
    }

    /// The `k`-th lane along `axis`, counting the other dims in row-major order.
    fn lane_offset_of(&self, axis: usize, mut k: usize) -> isize {
        let mut off = 0isize;
        for d in (0..self.ndim).rev() {
            if d == axis {
                continue;
            }
            let size = self.shape[d];
            off += (k % size) as isize * self.strides[d];
            k /= size;
        }
        off
    }

    fn lanes_count(&self, axis: usize) -> usize {
        assert!(axis < self.ndim, "axis {} is out of range for a tensor of {} dims", axis, self.ndim);
        if self.shape[axis] == 0 {
            // Lanes of length 0 still exist once per position of the other dims.
            return self.shape[..self.ndim].iter().enumerate().filter(|(d, _)| *d != axis).map(|(_, s)| *s).product();
        }
        self.numel() / self.shape[axis]
    }

    /// Lowest and highest element offsets a view touches (None when it is empty).
    fn span(&self) -> Option<(isize, isize)> {
        if self.numel() == 0 {
            return None;
        }
        let (mut lo, mut hi) = (0isize, 0isize);
        for d in 0..self.ndim {
            let reach = (self.shape[d] as isize - 1) * self.strides[d];
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        Some((lo, hi))
    }
}

// ---------------------------------------------------------------------------------------
// TensorRef: a read-only strided view (an input).

/// A read-only view of an input tensor: any strides (in elements; 0 where broadcast,
/// negative where reversed), any rank up to 8, possibly empty.
pub struct TensorRef<'a, T: Element> {
    ptr: *const T, // element 0 (all-zero index)
    layout: Layout,
    _life: PhantomData<&'a [T]>,
}

impl<T: Element> Clone for TensorRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element> Copy for TensorRef<'_, T> {}
// A view is a shared borrow of caller memory that nobody writes during the call.
unsafe impl<T: Element> Send for TensorRef<'_, T> {}
unsafe impl<T: Element> Sync for TensorRef<'_, T> {}

// The shape accessors of TensorRef and TensorMut.
macro_rules! shape_accessors {
    () => {
        pub fn ndim(&self) -> usize {
            self.layout.ndim
        }
        pub fn shape(&self) -> &[usize] {
            &self.layout.shape[..self.layout.ndim]
        }
        /// Strides in elements (may be 0 or negative for inputs; row-major for the output).
        pub fn strides(&self) -> &[isize] {
            &self.layout.strides[..self.layout.ndim]
        }
        pub fn size(&self, dim: usize) -> usize {
            self.shape()[dim]
        }
        pub fn stride(&self, dim: usize) -> isize {
            self.strides()[dim]
        }
        pub fn numel(&self) -> usize {
            self.layout.numel()
        }
        pub fn is_empty(&self) -> bool {
            self.numel() == 0
        }
    };
}

impl<'a, T: Element> TensorRef<'a, T> {
    shape_accessors!();
    /// Row-major and compact (what `as_slice` needs).
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_contiguous()
    }

    /// The element at `index` (one entry per dim); panics if it is out of bounds.
    pub fn get(&self, index: &[usize]) -> T {
        let off = self.layout.offset(index);
        // In bounds: every index below the shape maps into the caller's buffer.
        unsafe { *self.ptr.offset(off) }
    }

    /// The only element of a tensor with one element (a 0-d tensor, or shape [1, 1], ...).
    pub fn item(&self) -> T {
        assert!(self.numel() == 1, "item() needs exactly one element, the tensor has {}", self.numel());
        unsafe { *self.ptr }
    }

    /// All elements in row-major order as one slice, when the view is contiguous.
    pub fn as_slice(&self) -> Option<&'a [T]> {
        if !self.is_contiguous() {
            return None;
        }
        let n = self.numel();
        if n == 0 {
            return Some(&[]);
        }
        Some(unsafe { std::slice::from_raw_parts(self.ptr, n) })
    }

    /// Every element in row-major order, whatever the strides.
    pub fn iter(&self) -> Iter<'a, T> {
        if self.layout.ndim == 0 {
            return Iter { lanes: None, lane: Lane { ptr: self.ptr, len: 1, stride: 0, _life: PhantomData }.iter() };
        }
        let last = self.layout.ndim - 1;
        Iter { lanes: Some(self.lanes(last)), lane: Lane::empty().iter() }
    }

    /// A contiguous row-major copy of the elements.
    pub fn to_vec(&self) -> Vec<T> {
        match self.as_slice() {
            Some(s) => s.to_vec(),
            None => self.iter().collect(),
        }
    }

    /// The 1-d lane along `axis` through the position `others` of the other dims
    /// (`ndim - 1` indices, in dim order). For a matrix: `lane(1, &[i])` is row i,
    /// `lane(0, &[j])` column j.
    pub fn lane(&self, axis: usize, others: &[usize]) -> Lane<'a, T> {
        let off = self.layout.lane_offset(axis, others);
        Lane {
            ptr: self.ptr.wrapping_offset(off),
            len: self.layout.shape[axis],
            stride: self.layout.strides[axis],
            _life: PhantomData,
        }
    }

    /// Every lane along `axis`, the other dims in row-major order (the order of the
    /// elements of a reduction over `axis`).
    pub fn lanes(&self, axis: usize) -> Lanes<'a, T> {
        Lanes { base: self.ptr, walk: LaneWalk::new(self.layout, axis), _life: PhantomData }
    }

    /// The view with its leading dims fixed at `leading` (a batch element of a gufunc input).
    pub fn sub(&self, leading: &[usize]) -> TensorRef<'a, T> {
        let k = leading.len();
        assert!(k <= self.layout.ndim, "sub() got {} indices for a tensor of {} dims", k, self.layout.ndim);
        let mut off = 0isize;
        for d in 0..k {
            assert!(
                leading[d] < self.layout.shape[d],
                "sub() index {:?} is out of bounds for shape {:?}",
                leading,
                self.shape()
            );
            off += leading[d] as isize * self.layout.strides[d];
        }
        let mut layout = self.layout;
        layout.ndim -= k;
        for d in 0..layout.ndim {
            layout.shape[d] = self.layout.shape[d + k];
            layout.strides[d] = self.layout.strides[d + k];
        }
        TensorRef { ptr: self.ptr.wrapping_offset(off), layout, _life: PhantomData }
    }

    /// Used by generated shims only: a view with new leading dims of stride 0 (NumPy broadcasting).
    #[doc(hidden)]
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Self> {
        let nd = shape.len();
        if nd < self.layout.ndim || nd > MAX_DIMS {
            return Err(Error::value("cannot broadcast to a lower rank"));
        }
        let mut r = *self;
        r.layout.ndim = nd;
        let lead = nd - self.layout.ndim;
        for d in (0..nd).rev() {
            let (size, stride) =
                if d >= lead { (self.layout.shape[d - lead], self.layout.strides[d - lead]) } else { (1, 0) };
            if size == shape[d] {
                r.layout.shape[d] = size;
                r.layout.strides[d] = stride;
            } else if size == 1 {
                r.layout.shape[d] = shape[d];
                r.layout.strides[d] = 0;
            } else {
                return Err(Error::value("shapes cannot be broadcast together"));
            }
        }
        Ok(r)
    }

    /// Used by generated shims only: the same view, its loop dims broadcast to `lead`, its
    /// last `core` dims kept.
    #[doc(hidden)]
    pub fn with_leading(&self, lead: &[usize], core: usize) -> Result<Self> {
        let mut full: Vec<usize> = lead.to_vec();
        full.extend_from_slice(&self.shape()[self.layout.ndim - core..]);
        self.broadcast_to(&full)
    }

    /// Used by generated shims only: the byte range this view reads.
    #[doc(hidden)]
    pub fn byte_span(&self) -> Option<(usize, usize)> {
        byte_span::<T>(self.ptr as usize, &self.layout)
    }
}

fn byte_span<T>(base: usize, layout: &Layout) -> Option<(usize, usize)> {
    let size = std::mem::size_of::<T>() as isize;
    layout.span().map(|(lo, hi)| {
        let lo = (base as isize).wrapping_add(lo * size) as usize;
        let hi = (base as isize).wrapping_add((hi + 1) * size) as usize;
        (lo, hi)
    })
}

/// A 1-d strided run of elements of an input (a row, a column, a reduction lane).
pub struct Lane<'a, T: Element> {
    ptr: *const T,
    len: usize,
    stride: isize,
    _life: PhantomData<&'a [T]>,
}

impl<T: Element> Clone for Lane<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element> Copy for Lane<'_, T> {}
unsafe impl<T: Element> Send for Lane<'_, T> {}
unsafe impl<T: Element> Sync for Lane<'_, T> {}

// The accessors of Lane and LaneMut.
macro_rules! lane_accessors {
    () => {
        pub fn len(&self) -> usize {
            self.len
        }
        pub fn is_empty(&self) -> bool {
            self.len == 0
        }
        /// Distance between neighbours, in elements (may be 0 or negative for inputs).
        pub fn stride(&self) -> isize {
            self.stride
        }
        /// Element `i`; panics if `i >= len()`.
        pub fn get(&self, i: usize) -> T {
            assert!(i < self.len, "lane index {} is out of bounds (length {})", i, self.len);
            // In bounds: i < len, and every element of the lane is in the caller's buffer.
            unsafe { *self.ptr.offset(i as isize * self.stride) }
        }
    };
}

impl<'a, T: Element> Lane<'a, T> {
    lane_accessors!();
    fn empty() -> Self {
        Lane { ptr: NonNull::dangling().as_ptr(), len: 0, stride: 1, _life: PhantomData }
    }
    /// The elements as a slice, when they are adjacent (stride 1, or at most one element).
    pub fn as_slice(&self) -> Option<&'a [T]> {
        if self.len == 0 {
            return Some(&[]);
        }
        if self.stride == 1 || self.len == 1 {
            return Some(unsafe { std::slice::from_raw_parts(self.ptr, self.len) });
        }
        None
    }
    pub fn iter(&self) -> LaneIter<'a, T> {
        LaneIter { lane: *self, front: 0, back: self.len }
    }
    pub fn to_vec(&self) -> Vec<T> {
        match self.as_slice() {
            Some(s) => s.to_vec(),
            None => self.iter().collect(),
        }
    }
    /// Copy the elements into `dst` (which must be exactly `len()` long).
    pub fn copy_to(&self, dst: &mut [T]) {
        assert!(dst.len() == self.len, "copy_to: destination has {} elements, the lane {}", dst.len(), self.len);
        match self.as_slice() {
            Some(s) => dst.copy_from_slice(s),
            None => {
                for (i, d) in dst.iter_mut().enumerate() {
                    *d = unsafe { *self.ptr.offset(i as isize * self.stride) };
                }
            }
        }
    }
}

/// The elements of a lane, in order.
pub struct LaneIter<'a, T: Element> {
    lane: Lane<'a, T>,
    front: usize,
    back: usize,
}

impl<T: Element> Iterator for LaneIter<'_, T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.front >= self.back {
            return None;
        }
        let v = unsafe { *self.lane.ptr.offset(self.front as isize * self.lane.stride) };
        self.front += 1;
        Some(v)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
}

impl<T: Element> DoubleEndedIterator for LaneIter<'_, T> {
    fn next_back(&mut self) -> Option<T> {
        if self.front >= self.back {
            return None;
        }
        self.back -= 1;
        Some(unsafe { *self.lane.ptr.offset(self.back as isize * self.lane.stride) })
    }
}

impl<T: Element> ExactSizeIterator for LaneIter<'_, T> {}

/// Walks the lanes of a layout along one axis: (offset of the lane's first element, length, stride).
#[derive(Clone, Copy)]
struct LaneWalk {
    layout: Layout,
    axis: usize,
    next: usize,
    end: usize,
}

impl LaneWalk {
    fn new(layout: Layout, axis: usize) -> Self {
        let end = layout.lanes_count(axis);
        LaneWalk { layout, axis, next: 0, end }
    }
    fn step(&mut self) -> Option<(isize, usize, isize)> {
        if self.next >= self.end {
            return None;
        }
        let off = self.layout.lane_offset_of(self.axis, self.next);
        self.next += 1;
        Some((off, self.layout.shape[self.axis], self.layout.strides[self.axis]))
    }
    fn left(&self) -> usize {
        self.end - self.next
    }
}

/// Every lane of a view along one axis, the other dims in row-major order.
pub struct Lanes<'a, T: Element> {
    base: *const T,
    walk: LaneWalk,
    _life: PhantomData<&'a [T]>,
}

unsafe impl<T: Element> Send for Lanes<'_, T> {}

impl<'a, T: Element> Iterator for Lanes<'a, T> {
    type Item = Lane<'a, T>;
    fn next(&mut self) -> Option<Lane<'a, T>> {
        let (off, len, stride) = self.walk.step()?;
        Some(Lane { ptr: self.base.wrapping_offset(off), len, stride, _life: PhantomData })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.walk.left(), Some(self.walk.left()))
    }
    fn nth(&mut self, n: usize) -> Option<Lane<'a, T>> {
        self.walk.next = self.walk.next.saturating_add(n).min(self.walk.end);
        self.next()
    }
}

impl<T: Element> ExactSizeIterator for Lanes<'_, T> {}

/// Every element of a view in row-major order.
pub struct Iter<'a, T: Element> {
    lanes: Option<Lanes<'a, T>>,
    lane: LaneIter<'a, T>,
}

impl<T: Element> Iterator for Iter<'_, T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        loop {
            if let Some(v) = self.lane.next() {
                return Some(v);
            }
            match self.lanes.as_mut().and_then(|l| l.next()) {
                Some(lane) => self.lane = lane.iter(),
                None => return None,
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// TensorMut: the caller-allocated output (contiguous, row-major, filled with garbage).

/// The output tensor: contiguous, row-major, already of the result's shape and dtype,
/// and filled with garbage (NaN in tests): write every element.
pub struct TensorMut<'a, T: Element> {
    ptr: *mut T,
    layout: Layout,
    _life: PhantomData<&'a mut [T]>,
}

// Like &mut [T].
unsafe impl<T: Element> Send for TensorMut<'_, T> {}
unsafe impl<T: Element> Sync for TensorMut<'_, T> {}

impl<'a, T: Element> TensorMut<'a, T> {
    shape_accessors!();

    /// All elements, row-major.
    pub fn as_slice(&self) -> &[T] {
        let n = self.numel();
        if n == 0 {
            return &[];
        }
        unsafe { std::slice::from_raw_parts(self.ptr, n) }
    }

    /// All elements, row-major, for writing.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        let n = self.numel();
        if n == 0 {
            return &mut [];
        }
        unsafe { std::slice::from_raw_parts_mut(self.ptr, n) }
    }

    pub fn get(&self, index: &[usize]) -> T {
        let off = self.layout.offset(index);
        self.as_slice()[off as usize]
    }

    pub fn set(&mut self, index: &[usize], value: T) {
        let off = self.layout.offset(index);
        self.as_mut_slice()[off as usize] = value;
    }

    pub fn fill(&mut self, value: T) {
        self.as_mut_slice().fill(value);
    }

    /// The lane along `axis` through `others` (see `TensorRef::lane`), for writing.
    pub fn lane_mut(&mut self, axis: usize, others: &[usize]) -> LaneMut<'_, T> {
        let off = self.layout.lane_offset(axis, others);
        LaneMut {
            ptr: self.ptr.wrapping_offset(off),
            len: self.layout.shape[axis],
            stride: self.layout.strides[axis],
            _life: PhantomData,
        }
    }

    /// Every lane along `axis`, the other dims in row-major order, for writing. The lanes
    /// are disjoint, so they may be handed to different threads (collect them first).
    pub fn lanes_mut(&mut self, axis: usize) -> LanesMut<'_, T> {
        LanesMut { base: self.ptr, walk: LaneWalk::new(self.layout, axis), _life: PhantomData }
    }
}

/// A 1-d strided run of output elements.
pub struct LaneMut<'s, T: Element> {
    ptr: *mut T,
    len: usize,
    stride: isize,
    _life: PhantomData<&'s mut [T]>,
}

unsafe impl<T: Element> Send for LaneMut<'_, T> {}
unsafe impl<T: Element> Sync for LaneMut<'_, T> {}

impl<'s, T: Element> LaneMut<'s, T> {
    lane_accessors!();
    pub fn set(&mut self, i: usize, value: T) {
        assert!(i < self.len, "lane index {} is out of bounds (length {})", i, self.len);
        unsafe { *self.ptr.offset(i as isize * self.stride) = value }
    }
    /// The elements as a mutable slice, when adjacent (stride 1, or at most one element).
    pub fn as_mut_slice(&mut self) -> Option<&mut [T]> {
        if self.len == 0 {
            return Some(&mut []);
        }
        if self.stride == 1 || self.len == 1 {
            return Some(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) });
        }
        None
    }
    /// Write `src` (exactly `len()` elements) into the lane.
    pub fn copy_from(&mut self, src: &[T]) {
        assert!(src.len() == self.len, "copy_from: source has {} elements, the lane {}", src.len(), self.len);
        for (i, v) in src.iter().enumerate() {
            unsafe { *self.ptr.offset(i as isize * self.stride) = *v }
        }
    }
}

/// Every output lane along one axis.
pub struct LanesMut<'s, T: Element> {
    base: *mut T,
    walk: LaneWalk,
    _life: PhantomData<&'s mut [T]>,
}

unsafe impl<T: Element> Send for LanesMut<'_, T> {}

impl<'s, T: Element> Iterator for LanesMut<'s, T> {
    type Item = LaneMut<'s, T>;
    fn next(&mut self) -> Option<LaneMut<'s, T>> {
        // Distinct lanes are disjoint: the output is contiguous, so distinct indices are
        // distinct elements.
        let (off, len, stride) = self.walk.step()?;
        Some(LaneMut { ptr: self.base.wrapping_offset(off), len, stride, _life: PhantomData })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.walk.left(), Some(self.walk.left()))
    }
}

impl<T: Element> ExactSizeIterator for LanesMut<'_, T> {}

// ---------------------------------------------------------------------------------------
// What the generated shims use (kernels do not need it, and cannot call its unsafe parts).

#[doc(hidden)]
pub mod shim {
    use super::*;
    use std::ffi::c_void;
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::{Mutex, Once};

    // The C structs of opgen_abi.h.
    #[repr(C)]
    pub struct RawDevice {
        pub device_type: i32,
        pub device_id: i32,
    }
    #[repr(C)]
    pub struct RawDType {
        pub code: u8,
        pub bits: u8,
        pub lanes: u16,
    }
    #[repr(C)]
    pub struct RawTensor {
        pub data: *mut c_void,
        pub device: RawDevice,
        pub ndim: i32,
        pub dtype: RawDType,
        pub shape: *const i64,
        pub strides: *const i64,
        pub byte_offset: u64,
    }
    #[repr(C)]
    pub struct RawStr {
        pub data: *mut u8,
        pub len: i64,
    }
    #[repr(C)]
    pub struct RawList {
        pub data: *mut c_void,
        pub len: i64,
    }
    #[repr(C)]
    pub struct RawError {
        pub kind: i32,
        pub message: [u8; 256],
    }

    pub const OK: i32 = 0;

    // Results are malloc'ed here and released by the caller's opgen_free (libc free), as
    // the C++ shims do; Rust's own allocator must not be mixed in.
    extern "C" {
        fn malloc(size: usize) -> *mut c_void;
        pub fn free(p: *mut c_void);
    }

    fn alloc(bytes: usize) -> Result<*mut u8> {
        let p = unsafe { malloc(bytes.max(1)) } as *mut u8;
        if p.is_null() {
            return Err(Error::internal("out of memory allocating the result"));
        }
        Ok(p)
    }

    unsafe fn checked_layout<T: Element>(t: *const RawTensor, name: &str) -> Result<(*mut T, Layout)> {
        if t.is_null() {
            return Err(Error::value(format!("tensor argument '{}' is null", name)));
        }
        let t = &*t;
        if t.dtype.code != T::DL_CODE || t.dtype.bits != T::BITS || t.dtype.lanes != 1 {
            return Err(Error::value(format!("tensor argument '{}' has the wrong dtype", name)));
        }
        if t.device.device_type != 1 {
            return Err(Error::value(format!("tensor argument '{}' is not in CPU memory", name)));
        }
        if t.ndim < 0 || t.ndim as usize > MAX_DIMS {
            return Err(Error::value("tensor rank out of range"));
        }
        let ndim = t.ndim as usize;
        let mut layout = Layout { ndim, shape: [0; MAX_DIMS], strides: [0; MAX_DIMS] };
        if ndim > 0 && t.shape.is_null() {
            return Err(Error::value(format!("tensor argument '{}' has no shape", name)));
        }
        let mut compact: isize = 1;
        let mut numel: usize = 1;
        for d in (0..ndim).rev() {
            let size = *t.shape.add(d);
            if size < 0 {
                return Err(Error::value(format!("tensor argument '{}' has a negative size", name)));
            }
            layout.shape[d] = size as usize;
            layout.strides[d] = if t.strides.is_null() { compact } else { *t.strides.add(d) as isize };
            compact = compact.wrapping_mul(size as isize);
            numel = numel
                .checked_mul(size as usize)
                .ok_or_else(|| Error::value(format!("tensor argument '{}' is too large", name)))?;
        }
        let base = (t.data as *mut u8).wrapping_add(t.byte_offset as usize) as *mut T;
        if numel > 0 {
            if t.data.is_null() {
                return Err(Error::value(format!("tensor argument '{}' has no data", name)));
            }
            if (base as usize) % std::mem::align_of::<T>() != 0 {
                return Err(Error::value(format!(
                    "tensor argument '{}' is not aligned to its element size",
                    name
                )));
            }
        }
        Ok((base, layout))
    }

    /// An input view of a C tensor. Safety: `t` is a valid opgen_tensor whose memory
    /// holds every element its shape and strides name, unchanged during the call.
    pub unsafe fn tensor_ref<'a, T: Element>(t: *const RawTensor, name: &str) -> Result<TensorRef<'a, T>> {
        let (ptr, layout) = checked_layout::<T>(t, name)?;
        let view = TensorRef { ptr: ptr as *const T, layout, _life: PhantomData };
        if T::DL_CODE == 6 && view.numel() > 0 {
            // A Rust bool must be 0 or 1; any other byte would be undefined behaviour. A contiguous
            // buffer is checked by OR-ing its bytes (no early exit, so it runs as vector code): the
            // element-by-element walk cost more than the kernels (a bool concatenate at 0.07x NumPy).
            let bytes = TensorRef::<u8> { ptr: ptr as *const u8, layout, _life: PhantomData };
            let other_byte = match bytes.as_slice() {
                Some(s) => s.iter().fold(0u8, |acc, &b| acc | b) > 1,
                None => bytes.iter().any(|b| b > 1),
            };
            if other_byte {
                return Err(Error::value(format!("bool tensor argument '{}' holds a byte other than 0 or 1", name)));
            }
        }
        Ok(view)
    }

    /// The output view of a C tensor (shape and contiguity are checked by `check_output`
    /// before the kernel sees it). Safety: as for `tensor_ref`, and nothing else reads or
    /// writes the memory during the call (`check_disjoint` checks the inputs).
    pub unsafe fn tensor_mut<'a, T: Element>(t: *mut RawTensor, name: &str) -> Result<TensorMut<'a, T>> {
        let (ptr, layout) = checked_layout::<T>(t, name)?;
        Ok(TensorMut { ptr, layout, _life: PhantomData })
    }

    pub fn check_output<T: Element>(out: &TensorMut<'_, T>, expect: &[usize]) -> Result<()> {
        if out.shape() != expect {
            return Err(Error::value("output tensor does not have the shape the spec's shape rule gives"));
        }
        if !out.layout.is_contiguous() {
            return Err(Error::value("output tensor must be contiguous"));
        }
        Ok(())
    }

    /// The output may not share memory with an input: the kernel holds it as `&mut`.
    pub fn check_disjoint<T: Element>(out: &TensorMut<'_, T>, inputs: &[(&str, Option<(usize, usize)>)]) -> Result<()> {
        let Some((lo, hi)) = byte_span::<T>(out.ptr as usize, &out.layout) else { return Ok(()) };
        for (name, span) in inputs {
            if let Some((a, b)) = span {
                if *a < hi && lo < *b {
                    return Err(Error::value(format!(
                        "the output tensor overlaps input '{}'; pass a separate output array",
                        name
                    )));
                }
            }
        }
        Ok(())
    }

    pub fn broadcast_shapes<S: AsRef<[usize]>>(shapes: &[S]) -> Result<Vec<usize>> {
        let nd = shapes.iter().map(|s| s.as_ref().len()).max().unwrap_or(0);
        let mut out = vec![1usize; nd];
        for s in shapes {
            let s = s.as_ref();
            for (i, &v) in s.iter().enumerate() {
                let o = &mut out[nd - s.len() + i];
                if *o == 1 {
                    *o = v;
                } else if v != 1 && v != *o {
                    return Err(Error::value("input shapes cannot be broadcast together"));
                }
            }
        }
        Ok(out)
    }

    /// The views of a list-of-tensors argument (an array of opgen_tensor and its length), each
    /// checked as a single tensor argument is. Safety: `xs` holds `len` valid opgen_tensors.
    pub unsafe fn tensor_list<'a, T: Element>(xs: *const RawTensor, len: i64, name: &str) -> Result<Vec<TensorRef<'a, T>>> {
        if len < 0 {
            return Err(Error::value(format!("list argument '{}' has a negative length", name)));
        }
        if len > 0 && xs.is_null() {
            return Err(Error::value(format!("list argument '{}' is null", name)));
        }
        (0..len as usize).map(|i| tensor_ref::<T>(xs.add(i), name)).collect()
    }

    /// numpy.concatenate's (`stack` false) or numpy.stack's result shape, with NumPy's ValueErrors
    /// in NumPy's order and words (opgen.spec.shapes.join_shape is the same rule in Python).
    pub fn join_shape<T: Element>(xs: &[TensorRef<'_, T>], axis: i64, stack: bool) -> Result<Vec<usize>> {
        if xs.is_empty() {
            return Err(Error::value(if stack { "need at least one array to stack" } else { "need at least one array to concatenate" }));
        }
        let mut first = xs[0].shape().to_vec();
        let nd = first.len() as i64;
        if stack {
            if xs.iter().any(|x| x.shape() != first.as_slice()) {
                return Err(Error::value("all input arrays must have the same shape"));
            }
            if axis < -(nd + 1) || axis > nd {
                return Err(Error::value(format!("axis {} is out of bounds for array of dimension {}", axis, nd + 1)));
            }
            if nd + 1 > 8 {
                return Err(Error::value("the result has more dims than an opgen tensor holds (8)"));
            }
            let ax = if axis < 0 { axis + nd + 1 } else { axis } as usize;
            first.insert(ax, xs.len());
            return Ok(first);
        }
        if nd == 0 {
            return Err(Error::value("zero-dimensional arrays cannot be concatenated"));
        }
        if axis < -nd || axis >= nd {
            return Err(Error::value(format!("axis {} is out of bounds for array of dimension {}", axis, nd)));
        }
        let ax = if axis < 0 { axis + nd } else { axis } as usize;
        let mut total = 0usize;
        for (i, x) in xs.iter().enumerate() {
            let s = x.shape();
            if s.len() as i64 != nd {
                return Err(Error::value(format!(
                    "all the input arrays must have same number of dimensions, but the array at index 0 has {} dimension(s) and the array at index {} has {} dimension(s)",
                    nd, i, s.len())));
            }
            for d in 0..s.len() {
                if d != ax && s[d] != first[d] {
                    return Err(Error::value(format!(
                        "all the input array dimensions except for the concatenation axis must match exactly, but along dimension {}, the array at index 0 has size {} and the array at index {} has size {}",
                        d, first[d], i, s[d])));
                }
            }
            total += s[ax];
        }
        first[ax] = total;
        Ok(first)
    }

    pub fn normalize_axis(axis: i64, ndim: usize) -> Result<i64> {
        let nd = ndim as i64;
        if axis < -nd || axis >= nd {
            return Err(Error::value("axis out of range"));
        }
        Ok(if axis < 0 { axis + nd } else { axis })
    }

    /// A C string argument (UTF-8 bytes and a length). Safety: `p` points at `len` bytes.
    pub unsafe fn str_arg<'a>(p: *const u8, len: i64, name: &str) -> Result<&'a str> {
        let bytes = slice_arg::<u8>(p, len, name)?;
        std::str::from_utf8(bytes).map_err(|_| Error::value(format!("string argument '{}' is not valid UTF-8", name)))
    }

    /// A C array argument. Safety: `p` points at `len` elements.
    pub unsafe fn slice_arg<'a, T>(p: *const T, len: i64, name: &str) -> Result<&'a [T]> {
        if len < 0 {
            return Err(Error::value(format!("argument '{}' has a negative length", name)));
        }
        if len == 0 {
            return Ok(&[]);
        }
        if p.is_null() || (p as usize) % std::mem::align_of::<T>() != 0 {
            return Err(Error::value(format!("argument '{}' is null or misaligned", name)));
        }
        Ok(std::slice::from_raw_parts(p, len as usize))
    }

    /// A list[bool] argument (bytes, nonzero is true).
    pub unsafe fn bool_list_arg(p: *const u8, len: i64, name: &str) -> Result<Vec<bool>> {
        Ok(slice_arg::<u8>(p, len, name)?.iter().map(|&b| b != 0).collect())
    }

    /// A list[str] argument. Safety: `p` points at `len` opgen_strings, each valid.
    pub unsafe fn str_list_arg<'a>(p: *const RawStr, len: i64, name: &str) -> Result<Vec<&'a str>> {
        let items = slice_arg::<RawStr>(p, len, name)?;
        items.iter().map(|s| str_arg(s.data as *const u8, s.len, name)).collect()
    }

    /// Safety: `out` is null or points at a writable T.
    pub unsafe fn write_scalar<T>(out: *mut T, value: T) -> Result<()> {
        if out.is_null() {
            return Err(Error::value("the result pointer is null"));
        }
        out.write(value);
        Ok(())
    }

    /// A str result: one malloc'ed block the caller releases with opgen_free.
    pub unsafe fn write_string(out: *mut RawStr, s: &str) -> Result<()> {
        if out.is_null() {
            return Err(Error::value("the result pointer is null"));
        }
        let p = alloc(s.len())?;
        std::ptr::copy_nonoverlapping(s.as_ptr(), p, s.len());
        out.write(RawStr { data: p, len: s.len() as i64 });
        Ok(())
    }

    /// A list[int] / list[float] / list[bool] result (bools as bytes): one malloc'ed block.
    pub unsafe fn write_list<T: Copy>(out: *mut RawList, items: &[T]) -> Result<()> {
        if out.is_null() {
            return Err(Error::value("the result pointer is null"));
        }
        let bytes = std::mem::size_of_val(items);
        let p = alloc(bytes)? as *mut T; // malloc aligns for any scalar
        std::ptr::copy_nonoverlapping(items.as_ptr(), p, items.len());
        out.write(RawList { data: p as *mut c_void, len: items.len() as i64 });
        Ok(())
    }

    pub unsafe fn write_bool_list(out: *mut RawList, items: &[bool]) -> Result<()> {
        let bytes: Vec<u8> = items.iter().map(|&b| b as u8).collect();
        write_list(out, &bytes)
    }

    /// A list[str] result: ONE malloc'ed block, the opgen_string array then the bytes.
    pub unsafe fn write_str_list(out: *mut RawList, items: &[String]) -> Result<()> {
        if out.is_null() {
            return Err(Error::value("the result pointer is null"));
        }
        let head = items.len() * std::mem::size_of::<RawStr>();
        let total = items.iter().fold(head, |n, s| n + s.len());
        let block = alloc(total)?;
        let heads = block as *mut RawStr;
        let mut cursor = block.add(head);
        for (i, s) in items.iter().enumerate() {
            std::ptr::copy_nonoverlapping(s.as_ptr(), cursor, s.len());
            heads.add(i).write(RawStr { data: cursor, len: s.len() as i64 });
            cursor = cursor.add(s.len());
        }
        out.write(RawList { data: block as *mut c_void, len: items.len() as i64 });
        Ok(())
    }

    // The first panic message (with its location) of the current call. A process-wide slot:
    // kernels of one library are called one at a time by the harness; two threads calling
    // kernels of one library and panicking at once could see each other's message.
    static PANIC: Mutex<Option<String>> = Mutex::new(None);
    static HOOK: Once = Once::new();

    fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
        if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "a panic with a non-string payload".to_string()
        }
    }

    fn install_hook() {
        // The hook records instead of printing (kernels must not print). It belongs to this
        // library's own copy of std, so it changes nothing for the host process. The first
        // panic wins: a panic in a scoped thread is re-raised by `scope` as "a scoped thread
        // panicked", which says less.
        HOOK.call_once(|| {
            panic::set_hook(Box::new(|info| {
                let mut text = payload_text(info.payload());
                if let Some(at) = info.location() {
                    text = format!("{} (at {}:{}:{})", text, at.file(), at.line(), at.column());
                }
                let mut slot = PANIC.lock().unwrap_or_else(|e| e.into_inner());
                if slot.is_none() {
                    *slot = Some(text);
                }
            }))
        });
    }

    /// Runs the body of a shim: an `Err` becomes its status code and message, a panic the
    /// Internal error with the panic's message and location.
    pub fn guard(err: *mut RawError, body: impl FnOnce() -> Result<()>) -> i32 {
        install_hook();
        PANIC.lock().unwrap_or_else(|e| e.into_inner()).take();
        match panic::catch_unwind(AssertUnwindSafe(body)) {
            Ok(Ok(())) => OK,
            Ok(Err(e)) => fail(err, e.kind as i32, &e.message),
            Err(payload) => {
                let recorded = PANIC.lock().unwrap_or_else(|e| e.into_inner()).take();
                let text = recorded.unwrap_or_else(|| payload_text(&*payload));
                fail(err, ErrorKind::Internal as i32, &format!("the kernel panicked: {}", text))
            }
        }
    }

    /// Fill `err` (message truncated to 255 bytes on a character boundary) and return `kind`.
    pub fn fail(err: *mut RawError, kind: i32, message: &str) -> i32 {
        if !err.is_null() {
            let mut n = message.len().min(255);
            while !message.is_char_boundary(n) {
                n -= 1;
            }
            unsafe {
                (*err).kind = kind;
                let dst = &mut (*err).message;
                dst[..n].copy_from_slice(&message.as_bytes()[..n]);
                dst[n] = 0;
            }
        }
        kind
    }
}
