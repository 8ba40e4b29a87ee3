fn main() {
    ptxr::Build::new()
        .files(["kernels/saxpy.ptx", "kernels/warp_reduce.ptx", "kernels/reduce_shared.ptx"])
        // NVRTC's PTX does not say which .u64 parameters are pointers; these kernels take
        // only pointers as .u64, so the safe bindings take every one as a buffer.
        .buffers(true)
        .opt_level(3)
        .compile("kernels");
}
