// zlib, for the gzip files Apple's App Store Connect reports arrive in (Debian: zlib1g-dev).
#include <zlib.h>
