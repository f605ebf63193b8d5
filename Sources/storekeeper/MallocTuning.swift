import CMallocTuning

/// Tells glibc's allocator to keep memory it has freed instead of returning it to the kernel at once.
///
/// A batch of webhook bodies allocates and frees megabytes on each of a few threads many times a second. With
/// glibc's defaults each free trims the heap and each large buffer is its own `mmap`, so the next batch faults the
/// same pages back in, zeroing every one (about 3% of the CPU in `bench-notifications` profiles). Keeping up to
/// 256 MB of freed heap and serving buffers under 32 MB from the heap costs at most that much resident memory.
enum MallocTuning {
    static func keepFreedMemory() {
        storekeeper_tune_malloc(256 << 20, 16 << 20, 32 << 20)
    }
}
