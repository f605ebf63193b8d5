#ifndef STOREKEEPER_CMALLOCTUNING_H
#define STOREKEEPER_CMALLOCTUNING_H

/// Keeps up to `trim_threshold` bytes of freed heap instead of returning it to the kernel, pads heap growth by
/// `top_pad`, and serves allocations below `mmap_threshold` from the heap. Does nothing outside glibc.
void storekeeper_tune_malloc(int trim_threshold, int top_pad, int mmap_threshold);

#endif
