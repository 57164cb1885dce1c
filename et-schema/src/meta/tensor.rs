//! Tensor shapes and types as a program declares them.

use core::mem::MaybeUninit;

use crate::error::Error;
use crate::fields as fb;
use crate::reader::{Fields, Table};
use crate::scalar_type::ScalarType;

/// ExecuTorch's limit on tensor rank (`kTensorDimensionLimit`).
pub const MAX_DIM: usize = 16;

/// Whether, and how far, a tensor's shape may change at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ShapeDynamism {
    /// The shape is fixed at export.
    Static = 0,
    /// The shape may change, with at most as many elements as the exported upper bound.
    Bound = 1,
    /// Unbounded dynamic shapes (rejected at load, as in ExecuTorch's portable runtime).
    Unbound = 2,
}

/// Shape and type of a tensor input or output as exported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    /// Element type.
    pub dtype: ScalarType,
    rank: u8,
    sizes: [usize; MAX_DIM],
    dim_order: [u8; MAX_DIM],
    /// Whether the shape can change (for `Bound`, `sizes` are the upper bound).
    pub dynamism: ShapeDynamism,
}

impl TensorInfo {
    /// Exported sizes (the upper bound for bounded-dynamic tensors).
    pub fn sizes(&self) -> &[usize] {
        &self.sizes[..self.rank as usize]
    }

    /// Dim order.
    pub fn dim_order(&self) -> &[u8] {
        &self.dim_order[..self.rank as usize]
    }

    /// Number of elements at the exported sizes.
    pub fn numel(&self) -> usize {
        self.sizes().iter().product()
    }

    /// Bytes at the exported sizes.
    pub fn nbytes(&self) -> usize {
        self.numel() * self.dtype.element_size()
    }

    /// Reads and checks a `Tensor` table's dtype, shape, dim order and dynamism.
    pub fn read(t: Table<'_>) -> Result<TensorInfo, Error> {
        let shape = TensorShape::read(t.fields())?;
        let rank = shape.rank();
        let mut info = TensorInfo {
            dtype: shape.dtype,
            rank: rank as u8,
            sizes: [0; MAX_DIM],
            dim_order: [0; MAX_DIM],
            dynamism: shape.dynamism,
        };
        shape.fill(&mut info.sizes[..rank], &mut info.dim_order[..rank])?;
        Ok(info)
    }
}

/// A `Tensor` table's dtype, dynamism and shape vectors, checked to agree in rank and to
/// lie inside the buffer.
#[derive(Clone, Copy, Debug)]
pub struct TensorShape<'d> {
    /// Element type.
    pub dtype: ScalarType,
    /// Whether the shape may change.
    pub dynamism: ShapeDynamism,
    /// The sizes, `rank` little-endian `i32`s.
    sizes: &'d [u8],
    /// The dim order, `rank` bytes.
    order: &'d [u8],
}

impl<'d> TensorShape<'d> {
    /// Reads a `Tensor` table's dtype, dynamism and shape vectors; fails unless the dtype
    /// is known, both vectors are present with the same length, at most [`MAX_DIM`].
    // Inline outside size-first builds: `load_method` reads every tensor through here,
    // and out of line the shape came back through memory.
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn read(t: Fields<'d>) -> Result<TensorShape<'d>, Error> {
        type T<'x> = fb::Tensor<'x>;
        let dtype = t.uint(T::VT_SCALAR_TYPE, 1) as u8 as i8;
        let dtype = ScalarType::from_i8(dtype).ok_or(Error::InvalidProgram)?;
        // Each vector as one checked slice: filling the shape is then plain loads.
        let sizes = t
            .vector_bytes(T::VT_SIZES, 4)
            .ok_or(Error::InvalidProgram)?;
        let order = t
            .vector_bytes(T::VT_DIM_ORDER, 1)
            .ok_or(Error::InvalidProgram)?;
        if order.len() > MAX_DIM || sizes.len() != 4 * order.len() {
            return Err(Error::InvalidProgram);
        }
        let dynamism = match t.uint(T::VT_SHAPE_DYNAMISM, 1) {
            0 => ShapeDynamism::Static,
            1 => ShapeDynamism::Bound,
            2 => ShapeDynamism::Unbound,
            _ => return Err(Error::InvalidProgram),
        };
        Ok(TensorShape {
            dtype,
            dynamism,
            sizes,
            order,
        })
    }

    /// The rank (at most [`MAX_DIM`]).
    pub fn rank(&self) -> usize {
        self.order.len()
    }

    /// Writes the sizes and the dim order into `sizes` and `order` (`rank` long each),
    /// checking that sizes are not negative, that the dim order is a permutation and that
    /// the byte size fits in a `usize`; returns the byte size.
    // Always inline: a call of `fill_uninit`, not a second function.
    #[inline(always)]
    pub fn fill(&self, sizes: &mut [usize], order: &mut [u8]) -> Result<usize, Error> {
        // SAFETY: `MaybeUninit<T>` has the layout of `T`, and `fill_uninit` only writes
        // initialized values, so both slices stay initialized.
        unsafe {
            self.fill_uninit(
                &mut *(sizes as *mut [usize] as *mut [MaybeUninit<usize>]),
                &mut *(order as *mut [u8] as *mut [MaybeUninit<u8>]),
            )
        }
    }

    /// As [`fill`](Self::fill), into memory that need not be initialized (the loader's
    /// fresh method memory, which then needs no clearing first). On success the first
    /// `rank` entries of each are initialized.
    #[cfg_attr(not(etch_size_first), inline)]
    pub fn fill_uninit(
        &self,
        sizes: &mut [MaybeUninit<usize>],
        order: &mut [MaybeUninit<u8>],
    ) -> Result<usize, Error> {
        let rank = self.rank();
        let mut seen = 0u32;
        let mut numel = 1usize;
        for (i, (s, o)) in sizes
            .iter_mut()
            .zip(order.iter_mut())
            .enumerate()
            .take(rank)
        {
            // SAFETY: `i < rank`; `read` checked that `sizes` holds `4 * rank` bytes and
            // `order` `rank`.
            let (size, d) = unsafe {
                let size = self
                    .sizes
                    .as_ptr()
                    .add(4 * i)
                    .cast::<[u8; 4]>()
                    .read_unaligned();
                (i32::from_le_bytes(size), *self.order.get_unchecked(i))
            };
            let size = usize::try_from(size).map_err(|_| Error::InvalidProgram)?;
            s.write(size);
            numel = numel.checked_mul(size).ok_or(Error::InvalidProgram)?;
            let d = usize::from(d);
            if d >= rank || seen & (1 << d) != 0 {
                return Err(Error::InvalidProgram);
            }
            seen |= 1 << d;
            o.write(d as u8);
        }
        numel
            .checked_mul(self.dtype.element_size())
            .ok_or(Error::InvalidProgram)
    }
}
