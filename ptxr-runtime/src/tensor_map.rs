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
}

/// Bytes of an element of each `CUtensorMapDataType` (0 u8 ... 12 tf32-ftz).
pub const DTYPE_BYTES: [u8; 13] = [1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4];

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
    let esize = *DTYPE_BYTES.get(dtype as usize).ok_or_else(|| format!("data type {dtype}: expected a CUtensorMapDataType (0..12)"))? as u64;
    if dims.len() < r || box_dim.len() < r || element_strides.len() < r || strides.len() + 1 < r {
        return Err(format!("a rank-{rank} map needs {rank} dims, box sizes and element strides and {} strides", r - 1));
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
        if !(1..=256).contains(&box_dim[d]) {
            return Err(format!("dimension {d}: box size {} (expected 1..256)", box_dim[d]));
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
    let row = box_dim[0] as u64 * esize;
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
        let (dim, b, es) = if d < r { (dims[d], box_dim[d], element_strides[d]) } else { (1, 1, 1) };
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
}
