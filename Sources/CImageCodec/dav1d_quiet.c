#define _GNU_SOURCE
#include <dlfcn.h>
#include <dav1d/dav1d.h>

// libavif 0.11.1 opens dav1d with dav1d's default settings, and their logger prints decode errors
// ("Error parsing OBU data", "Unknown OBU type 13") straight to stderr, where they would break into
// the progress display and a script's error stream. libavif gives no way to set the logger, so this
// definition takes the place of libdav1d's for every caller in the process (ELF looks symbols up in
// the executable first): it runs the real one and drops the messages. The errors still reach
// imgfetch, as libavif's result codes.

// In C because it stands in for libdav1d's own function of this name (see above).
DAV1D_API void dav1d_default_settings(Dav1dSettings *settings) {
    void (*original)(Dav1dSettings *) = (void (*)(Dav1dSettings *))dlsym(RTLD_NEXT, "dav1d_default_settings");
    if (original != NULL) original(settings);
    settings->logger.callback = NULL;  // dav1d's way to log nothing
}
