extern crate std;
use super::*;
use crate::util::convert::{loader, storer};
use et_runtime::{ShapeDynamism, TensorBuf};
use std::vec::Vec;

#[test]
fn dims_wrap() {
    assert_eq!(normalize_dim(-1, 3), Ok(2));
    assert_eq!(normalize_dim(2, 3), Ok(2));
    assert!(normalize_dim(3, 3).is_err());
    assert!(normalize_dim(-4, 3).is_err());
    assert_eq!(normalize_dim(-1, 0), Ok(0));
    assert_eq!(normalize_dim(0, 0), Ok(0));
    assert!(normalize_dim(1, 0).is_err());
    assert_eq!(normalize_insert_dim(-1, 2), Ok(2));
    assert!(dims_mask(&[0, -2], 2).is_err());
    assert_eq!(dims_mask(&[0, -1], 3), Ok(0b101));
}

#[test]
fn walk_coalesces_contiguous() {
    let w = Walk::copy(&[2, 3, 4], &[12, 4, 1], &[12, 4, 1]).unwrap();
    assert_eq!(w.ndim, 1);
    assert_eq!(w.sizes[0], 24);
}

#[test]
fn walk_transpose_and_bounds() {
    // dst [3,2] contiguous <- src [2,3] transposed.
    let w = Walk::copy(&[3, 2], &[2, 1], &[1, 3]).unwrap();
    let mut seen = Vec::new();
    w.for_each([0, 0], [6, 6], |[d, s]| seen.push((d, s)))
        .unwrap();
    assert_eq!(seen, [(0, 0), (1, 3), (2, 1), (3, 4), (4, 2), (5, 5)]);
    assert!(w.check([0, 1], [6, 6]).is_err());
}

#[test]
fn walk_negative_strides() {
    let w = Walk::copy(&[4], &[1], &[-1]).unwrap();
    let mut seen = Vec::new();
    w.for_each([0, 3], [4, 4], |[_, s]| seen.push(s)).unwrap();
    assert_eq!(seen, [3, 2, 1, 0]);
    assert!(w.check([0, 2], [4, 4]).is_err());
}

#[test]
fn big_transpose_tiles() {
    // Full 16 x 16 tiles and ragged edges, for every element width, over a batch of two
    // planes: dst [n, c, r] contiguous = src [n, r, c] with its last two dims swapped.
    let (n, r, c) = (2usize, 37usize, 21usize);
    for elem in [1usize, 2, 4, 8] {
        let src_b: Vec<u8> = (0..n * r * c * elem)
            .map(|i| (i * 7 + i / 251) as u8)
            .collect();
        let mut dst_b = std::vec![0u8; src_b.len()];
        let plane = (r * c) as isize;
        let w = Walk::copy(&[n, c, r], &[plane, r as isize, 1], &[plane, 1, c as isize]).unwrap();
        w.move_bytes(elem, &mut dst_b, 0, &src_b, 0).unwrap();
        for b in 0..n {
            for i in 0..c {
                for j in 0..r {
                    let d = ((b * c + i) * r + j) * elem;
                    let s = ((b * r + j) * c + i) * elem;
                    assert_eq!(
                        dst_b[d..d + elem],
                        src_b[s..s + elem],
                        "elem {elem} [{b},{i},{j}]"
                    );
                }
            }
        }
    }
}

#[test]
fn logical_copy_between_orders() {
    // src [2,3] channels-last-like order [1,0]: memory holds the transpose.
    let mut src =
        TensorBuf::with_layout(ScalarType::Int, &[2, 3], &[1, 0], ShapeDynamism::Static).unwrap();
    src.data_mut::<i32>()
        .unwrap()
        .copy_from_slice(&[0, 3, 1, 4, 2, 5]);
    let mut dst = TensorBuf::zeros(ScalarType::Int, &[6]).unwrap();
    copy_logical(&mut dst, &src).unwrap();
    assert_eq!(dst.data::<i32>().unwrap(), &[0, 1, 2, 3, 4, 5]);
}

#[test]
fn same_shape_convert() {
    let src = TensorBuf::from_slice(&[2, 2], &[1i64, -2, 3, 40000]).unwrap();
    let mut dst =
        TensorBuf::with_layout(ScalarType::Float, &[2, 2], &[1, 0], ShapeDynamism::Static).unwrap();
    copy_same_shape(&mut dst, &src, Some(loader::<i64>()), Some(storer::<f32>())).unwrap();
    assert_eq!(dst.data::<f32>().unwrap(), &[1.0, 3.0, -2.0, 40000.0]);
}
