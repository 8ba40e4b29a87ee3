fn main() {
    ptxr::Build::new()
        .files(["kernels/saxpy.ptx", "kernels/warp_reduce.ptx", "kernels/reduce_shared.ptx"])
        // NVRTC's PTX does not say which .u64 parameters are pointers; these kernels take
        // only pointers as .u64, so the safe bindings take every one as a buffer.
        .buffers(true)
        .opt_level(3)
        .compile("kernels");
    // A second library compiled for the checking mode (as `ptxr run --check`): its launches
    // report bad accesses. The first library already holds the C launch functions.
    ptxr::Build::new().file("kernels/checked/scale.ptx").check(true).c_abi(false).opt_level(1).compile("checked");
}
