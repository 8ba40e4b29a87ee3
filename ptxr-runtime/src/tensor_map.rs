//! ptxr's tensor maps: the 128-byte objects that `cp.async.bulk.tensor` (PTX ISA 8.x
//! 9.7.9.25.5) reads the shape of a global tensor from. On an NVIDIA GPU a tensor map is made
//! by `cuTensorMapEncodeTiled` and its contents are not documented; kernels compiled by ptxr
//! read ptxr's own encoding, made by [`encode_tiled`] (from C: `ptxr_tensor_map_encode_tiled`
//! of the C runtime, `src/runtime/c/ptxr_rt.c`, with the parameters of
//! `cuTensorMapEncodeTiled`), laid out as below (little-endian).
//! A map passed by value as a kernel parameter (`.param .align 64 .b8 map[128]`) is copied
//! into the parameter buffer like any other by-value parameter.

/// "PXTM": marks a map that ptxr encoded (a kernel given anything else stops with an error).
pub const MAGIC: u32 = 0x4D54_5850;
pub const SIZE: usize = 128;

/// Byte offsets of the fields.
pub mod field {
    /// u32 [`super::MAGIC`]
    pub const MAGIC: u64 = 0;
    /// u8 rank, 1..=5
    pub const RANK: u64 = 4;
    /// u8 element type: `CUtensorMapDataType`'s numbering
    pub const DTYPE: u64 = 5;
    /// u8 interleave (0: none; ptxr runs no other)
    pub const INTERLEAVE: u64 = 6;
    /// u8 swizzle: 0 none, 1 32 bytes, 2 64 bytes, 3 128 bytes (`CUtensorMapSwizzle`)
    pub const SWIZZLE: u64 = 7;
    /// u64 global address of element (0, ..., 0)
    pub const ADDR: u64 = 8;
    /// u64 dims[5], innermost first (1 past the rank)
    pub const DIMS: u64 = 16;
    /// u64 strides[4]: bytes between consecutive indices of dimensions 1..rank-1
    pub const STRIDES: u64 = 56;
    /// u16 box[5]: elements of the box along each dimension
    pub const BOX: u64 = 88;
    /// u8 element strides[5]: the box takes every n-th element (the innermost is always 1)
    pub const ESTRIDES: u64 = 98;
    /// u8 out-of-bounds fill: 0 zeros, 1 NaN (`..._NAN_REQUEST_ZERO_FMA`)
    pub const FILL: u64 = 103;
    /// u8 L2 promotion (no effect here)
    pub const L2: u64 = 104;
    /// u8 bytes of one element
    pub const ESIZE: u64 = 105;
    /// u8 access mode: [`super::MODE_TILED`] or [`super::MODE_IM2COL`]
    pub const MODE: u64 = 106;
    /// i16 lower[3]: an im2col map's bounding-box lower corner, W, H, D (innermost first)
    pub const LOWER: u64 = 108;
    /// i16 upper[3]: its upper corner, W, H, D, relative to the tensor's far edge
    pub const UPPER: u64 = 114;
}

/// A tiled map (`cuTensorMapEncodeTiled`): BOX holds the box.
pub const MODE_TILED: u8 = 0;
/// An im2col map (`cuTensorMapEncodeIm2col`): BOX[0] holds the channels per pixel, BOX[1] the
/// pixels per column, LOWER and UPPER the bounding box.
pub const MODE_IM2COL: u8 = 1;

/// Bytes of an element of each `CUtensorMapDataType` (0 u8 ... 12 tf32-ftz), and for the
/// packed sub-byte types (13 `16U4_ALIGN8B`, 14 `16U4_ALIGN16B`, 15 `16U6_ALIGN16B`) the bytes
/// a unit of them takes in shared memory ([`unit_of`]).
pub const DTYPE_BYTES: [u8; 16] = [1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4, 1, 16, 16];

/// The unit a tensor copy moves for a data type: (elements, bytes in global memory, bytes in
/// shared memory). One element for the byte-sized types; the packed sub-byte types of
/// `cuTensorMapEncodeTiled` (PTX ISA 5.5.1.1.1): `16U4_ALIGN8B` (13) two 4-bit elements, a
/// byte either side; `16U4_ALIGN16B` (14, `.b4x16_p64`) sixteen in 8 bytes, padded to 16 in
/// shared memory; `16U6_ALIGN16B` (15, `.b6x16_p32`) sixteen in 12 bytes, padded to 16.
pub fn unit_of(dtype: u32) -> (u64, u64, u64) {
    match dtype {
        13 => (2, 1, 1),
        14 => (16, 8, 16),
        15 => (16, 12, 16),
        t => {
            let b = DTYPE_BYTES.get(t as usize).copied().unwrap_or(1) as u64;
            (1, b, b)
        }
    }
}

/// Encodes a tiled tensor map with `cuTensorMapEncodeTiled`'s parameters and checks:
/// `dims`/`box_dim`/`element_strides` have `rank` entries, `strides` `rank - 1` (bytes,
/// multiples of 16), the address is 16-byte aligned, `box_dim[i]` in 1..=256,
/// `element_strides[i]` in 1..=8, the box's innermost row a multiple of 16 bytes and, with a
/// swizzle, at most the swizzle's span.
#[allow(clippy::too_many_arguments)]
pub fn encode_tiled(dtype: u32, rank: u32, addr: u64, dims: &[u64], strides: &[u64], box_dim: &[u32], element_strides: &[u32], interleave: u32, swizzle: u32, l2: u32, oob_fill: u32) -> Result<[u8; SIZE], String> {
    let r = rank as usize;
    if !(1..=5).contains(&rank) {
        return Err(format!("rank {rank}: a tensor map has 1 to 5 dimensions"));
    }
    if box_dim.len() < r {
        return Err(format!("a rank-{rank} map needs {rank} box sizes"));
    }
    if let Some(d) = (0..r).find(|&d| !(1..=256).contains(&box_dim[d])) {
        return Err(format!("dimension {d}: box size {} (expected 1..256)", box_dim[d]));
    }
    encode(dtype, rank, addr, dims, strides, &box_dim[..r], element_strides, interleave, swizzle, l2, oob_fill, None)
}

/// Encodes an im2col map with `cuTensorMapEncodeIm2col`'s parameters (PTX ISA 8.x 5.5.4):
/// a tensor of rank 3 to 5 (C, W, {H, {D,}} N, innermost first), the bounding box's corners
/// (`rank - 2` each, W first; within +-2^15, 2^7 or 2^4 for ranks 3, 4, 5), `channels` (1..=256)
/// elements of each of `pixels` (1..=1024) pixels; the other checks as [`encode_tiled`]'s, with
/// the channels as the box's innermost row.
#[allow(clippy::too_many_arguments)]
pub fn encode_im2col(dtype: u32, rank: u32, addr: u64, dims: &[u64], strides: &[u64], lower: &[i32], upper: &[i32], channels: u32, pixels: u32, element_strides: &[u32], interleave: u32, swizzle: u32, l2: u32, oob_fill: u32) -> Result<[u8; SIZE], String> {
    if !(3..=5).contains(&rank) {
        return Err(format!("rank {rank}: an im2col tensor map has 3 to 5 dimensions"));
    }
    let spatial = rank as usize - 2;
    if lower.len() < spatial || upper.len() < spatial {
        return Err(format!("a rank-{rank} im2col map needs {spatial} lower and upper corner coordinates"));
    }
    let lim = [1i32 << 15, 1 << 7, 1 << 4][spatial - 1];
    for (name, c) in [("lower", lower), ("upper", upper)] {
        if let Some(v) = c[..spatial].iter().find(|&&v| v < -lim || v >= lim) {
            return Err(format!("{name} corner {v}: a rank-{rank} im2col map's corners lie in [{}, {}]", -lim, lim - 1));
        }
    }
    if let Some(k) = (0..spatial).find(|&k| dims.get(1 + k).map_or(false, |&n| n as i64 + upper[k] as i64 - lower[k] as i64 <= 0)) {
        return Err(format!("the bounding box is empty along dimension {} (size {}, corners {} and {})", 1 + k, dims[1 + k], lower[k], upper[k]));
    }
    if !(1..=256).contains(&channels) {
        return Err(format!("{channels} channels per pixel (expected 1..256)"));
    }
    if !(1..=1024).contains(&pixels) {
        return Err(format!("{pixels} pixels per column (expected 1..1024)"));
    }
    let mut corners = [0i16; 6];
    for k in 0..spatial {
        corners[k] = lower[k] as i16;
        corners[3 + k] = upper[k] as i16;
    }
    encode(dtype, rank, addr, dims, strides, &[channels, pixels], element_strides, interleave, swizzle, l2, oob_fill, Some(corners))
}

#[allow(clippy::too_many_arguments)]
fn encode(dtype: u32, rank: u32, addr: u64, dims: &[u64], strides: &[u64], box_dim: &[u32], element_strides: &[u32], interleave: u32, swizzle: u32, l2: u32, oob_fill: u32, im2col: Option<[i16; 6]>) -> Result<[u8; SIZE], String> {
    let r = rank as usize;
    let esize = *DTYPE_BYTES.get(dtype as usize).ok_or_else(|| format!("data type {dtype}: expected a CUtensorMapDataType (0..15)"))? as u64;
    let (unit, _, ssize) = unit_of(dtype);
    if dims.len() < r || element_strides.len() < r || strides.len() + 1 < r {
        return Err(format!("a rank-{rank} map needs {rank} dims and element strides and {} strides", r - 1));
    }
    if interleave != 0 {
        return Err("interleaved tensor maps are not supported by ptxr".into());
    }
    if swizzle > 3 {
        return Err(format!("swizzle {swizzle}: expected 0 (none), 1 (32B), 2 (64B) or 3 (128B)"));
    }
    if oob_fill > 1 {
        return Err(format!("out-of-bounds fill {oob_fill}: expected 0 (zeros) or 1 (NaN)"));
    }
    if addr % 16 != 0 {
        return Err(format!("global address {addr:#x} is not 16-byte aligned"));
    }
    for d in 0..r {
        if dims[d] == 0 || dims[d] > 1 << 32 {
            return Err(format!("dimension {d}: size {} (expected 1..2^32)", dims[d]));
        }
        if !(1..=8).contains(&element_strides[d]) {
            return Err(format!("dimension {d}: element stride {} (expected 1..8)", element_strides[d]));
        }
    }
    for (d, &s) in strides.iter().take(r - 1).enumerate() {
        if s % 16 != 0 || s >= 1 << 40 {
            return Err(format!("stride of dimension {}: {s} bytes (a multiple of 16 below 2^40)", d + 1));
        }
    }
    // The packed sub-byte types (cuTensorMapEncodeTiled's rules): tiled, no NaN fill; the
    // 16-byte-aligned ones with a 32-byte-aligned address and strides, the innermost size a
    // multiple of 128 and a box of 128 elements across; the packed 4-bit one an even size.
    if dtype >= 13 {
        if im2col.is_some() {
            return Err(format!("data type {dtype} (packed sub-byte elements): im2col maps are not supported by ptxr"));
        }
        if oob_fill != 0 {
            return Err(format!("data type {dtype} (packed sub-byte elements): the NaN fill is for floating-point types"));
        }
        if dtype >= 14 {
            if addr % 32 != 0 || strides.iter().take(r - 1).any(|s| s % 32 != 0) {
                return Err(format!("data type {dtype}: the global address and strides must be multiples of 32 bytes"));
            }
            if dims[0] % 128 != 0 || box_dim[0] != 128 {
                return Err(format!("data type {dtype}: the innermost size ({}) must be a multiple of 128 and the box 128 elements across (not {})", dims[0], box_dim[0]));
            }
        } else if dims[0] % 2 != 0 || box_dim[0] % 2 != 0 {
            return Err(format!("data type 13: the innermost size ({}) and box ({}) must be even", dims[0], box_dim[0]));
        }
    }
    let row = box_dim[0] as u64 / unit * ssize;
    if row % 16 != 0 {
        return Err(format!("the box's innermost row is {row} bytes: it must be a multiple of 16"));
    }
    let span = [0u64, 32, 64, 128][swizzle as usize];
    if span != 0 && row > span {
        return Err(format!("the box's innermost row is {row} bytes, more than the {span}-byte swizzle"));
    }
    let mut m = [0u8; SIZE];
    let mut put = |off: u64, bytes: &[u8]| m[off as usize..off as usize + bytes.len()].copy_from_slice(bytes);
    put(field::MAGIC, &MAGIC.to_le_bytes());
    put(field::RANK, &[rank as u8]);
    put(field::DTYPE, &[dtype as u8]);
    put(field::INTERLEAVE, &[0]);
    put(field::SWIZZLE, &[swizzle as u8]);
    put(field::ADDR, &addr.to_le_bytes());
    for d in 0..5 {
        let (dim, es) = if d < r { (dims[d], element_strides[d]) } else { (1, 1) };
        let b = box_dim.get(d).copied().unwrap_or(1);
        put(field::DIMS + 8 * d as u64, &dim.to_le_bytes());
        put(field::BOX + 2 * d as u64, &(b as u16).to_le_bytes());
        put(field::ESTRIDES + d as u64, &[es as u8]);
        if d >= 1 {
            let s = if d < r { strides[d - 1] } else { 0 };
            put(field::STRIDES + 8 * (d as u64 - 1), &s.to_le_bytes());
        }
    }
    put(field::FILL, &[oob_fill as u8]);
    put(field::L2, &[l2 as u8]);
    put(field::ESIZE, &[esize as u8]);
    if let Some(corners) = im2col {
        put(field::MODE, &[MODE_IM2COL]);
        for (k, c) in corners.iter().enumerate() {
            put(field::LOWER + 2 * k as u64, &c.to_le_bytes());
        }
    }
    Ok(m)
}

/// The global address of a map (to place its tensor, as `ptxr run` does).
pub fn with_address(map: &[u8; SIZE], addr: u64) -> [u8; SIZE] {
    let mut m = *map;
    m[field::ADDR as usize..field::ADDR as usize + 8].copy_from_slice(&addr.to_le_bytes());
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_and_checks() {
        let m = encode_tiled(6, 2, 0x1000, &[64, 40], &[128], &[32, 16], &[1, 1], 0, 3, 0, 0).unwrap();
        assert_eq!(u32::from_le_bytes(m[0..4].try_into().unwrap()), MAGIC);
        assert_eq!((m[4], m[5], m[7], m[105]), (2, 6, 3, 2));
        assert_eq!(u64::from_le_bytes(m[16..24].try_into().unwrap()), 64);
        assert_eq!(u64::from_le_bytes(m[56..64].try_into().unwrap()), 128);
        assert_eq!(u16::from_le_bytes(m[90..92].try_into().unwrap()), 16);
        // a row of 24 bytes, a stride that is not a multiple of 16, a swizzle narrower than the row
        assert!(encode_tiled(6, 1, 0, &[64], &[], &[12], &[1], 0, 0, 0, 0).is_err());
        assert!(encode_tiled(6, 2, 0, &[64, 4], &[100], &[8, 4], &[1, 1], 0, 0, 0, 0).is_err());
        assert!(encode_tiled(6, 2, 0, &[64, 4], &[128], &[32, 4], &[1, 1], 0, 1, 0, 0).is_err());
    }

    #[test]
    fn encodes_packed_sub_byte_types() {
        // 16U6_ALIGN16B: 256 x 4 elements, rows of 192 bytes (a multiple of 32), a 128 x 2 box
        let m = encode_tiled(15, 2, 0x1000, &[256, 4], &[192], &[128, 2], &[1, 1], 0, 3, 0, 0).unwrap();
        assert_eq!((m[5], m[105]), (15, 16));
        assert_eq!(unit_of(15), (16, 12, 16));
        assert_eq!(unit_of(14), (16, 8, 16));
        assert_eq!(unit_of(13), (2, 1, 1));
        assert_eq!(unit_of(7), (1, 4, 4));
        // a box of 64; a size of 192; a 16-byte-aligned address; a stride of 208; NaN fill
        assert!(encode_tiled(15, 2, 0x1000, &[256, 4], &[192], &[64, 2], &[1, 1], 0, 0, 0, 0).is_err());
        assert!(encode_tiled(14, 2, 0x1000, &[192, 4], &[96], &[128, 2], &[1, 1], 0, 0, 0, 0).is_err());
        assert!(encode_tiled(14, 2, 0x1010, &[256, 4], &[128], &[128, 2], &[1, 1], 0, 0, 0, 0).is_err());
        assert!(encode_tiled(15, 2, 0x1000, &[256, 4], &[208], &[128, 2], &[1, 1], 0, 0, 0, 0).is_err());
        assert!(encode_tiled(14, 2, 0x1000, &[256, 4], &[128], &[128, 2], &[1, 1], 0, 0, 0, 1).is_err());
        // 16U4_ALIGN8B: a box of 32 elements is 16 bytes; an odd size is refused
        assert!(encode_tiled(13, 2, 0x1000, &[64, 4], &[32], &[32, 2], &[1, 1], 0, 0, 0, 0).is_ok());
        assert!(encode_tiled(13, 2, 0x1000, &[63, 4], &[32], &[32, 2], &[1, 1], 0, 0, 0, 0).is_err());
        assert!(encode_tiled(13, 2, 0x1000, &[64, 4], &[32], &[16, 2], &[1, 1], 0, 0, 0, 0).is_err());
        assert!(encode_tiled(16, 1, 0x1000, &[64], &[], &[32], &[1], 0, 0, 0, 0).is_err());
    }

    #[test]
    fn encodes_im2col() {
        // NHWC 2x4x4x32 f32: C 32, W 4, H 4, N 2
        let m = encode_im2col(7, 4, 0x1000, &[32, 4, 4, 2], &[128, 512, 2048], &[-1, -2], &[3, -1], 32, 16, &[1, 1, 1, 1], 0, 3, 0, 0).unwrap();
        assert_eq!((m[4], m[5], m[105], m[106]), (4, 7, 4, MODE_IM2COL));
        assert_eq!(u16::from_le_bytes(m[88..90].try_into().unwrap()), 32);
        assert_eq!(u16::from_le_bytes(m[90..92].try_into().unwrap()), 16);
        let i16_at = |o: usize| i16::from_le_bytes(m[o..o + 2].try_into().unwrap());
        assert_eq!((i16_at(108), i16_at(110), i16_at(114), i16_at(116)), (-1, -2, 3, -1));
        assert_eq!(encode_tiled(7, 1, 0, &[64], &[], &[32], &[1], 0, 0, 0, 0).unwrap()[106], MODE_TILED);
        // rank 2; a rank-4 corner of 128; 0 pixels; 300 channels; 3 f32 channels (12 bytes);
        // packed sub-byte elements
        assert!(encode_im2col(7, 2, 0, &[32, 4], &[128], &[], &[], 32, 16, &[1, 1], 0, 0, 0, 0).is_err());
        assert!(encode_im2col(7, 4, 0, &[32, 4, 4, 2], &[128, 512, 2048], &[128, 0], &[0, 0], 32, 16, &[1; 4], 0, 0, 0, 0).is_err());
        assert!(encode_im2col(7, 4, 0, &[32, 4, 4, 2], &[128, 512, 2048], &[0, 0], &[0, 0], 32, 0, &[1; 4], 0, 0, 0, 0).is_err());
        assert!(encode_im2col(0, 4, 0, &[512, 4, 4, 2], &[512, 2048, 8192], &[0, 0], &[0, 0], 300, 16, &[1; 4], 0, 0, 0, 0).is_err());
        assert!(encode_im2col(7, 4, 0, &[32, 4, 4, 2], &[128, 512, 2048], &[0, 0], &[0, 0], 3, 16, &[1; 4], 0, 0, 0, 0).is_err());
        assert!(encode_im2col(15, 4, 0, &[128, 4, 4, 2], &[96, 384, 1536], &[0, 0], &[0, 0], 128, 16, &[1; 4], 0, 0, 0, 0).is_err());
        // W 4 with corners 2 and -2: an empty box
        assert!(encode_im2col(7, 4, 0, &[32, 4, 4, 2], &[128, 512, 2048], &[2, 0], &[-2, 0], 32, 16, &[1; 4], 0, 0, 0, 0).is_err());
    }
}
