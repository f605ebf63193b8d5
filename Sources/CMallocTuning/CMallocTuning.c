#include "CMallocTuning.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

void storekeeper_tune_malloc(int trim_threshold, int top_pad, int mmap_threshold) {
#if defined(__GLIBC__)
    mallopt(M_TRIM_THRESHOLD, trim_threshold);
    mallopt(M_TOP_PAD, top_pad);
    mallopt(M_MMAP_THRESHOLD, mmap_threshold);
#else
    (void)trim_threshold;
    (void)top_pad;
    (void)mmap_threshold;
#endif
}
