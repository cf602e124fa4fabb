#ifndef CTIFF_SHIM_H
#define CTIFF_SHIM_H
#include <tiffio.h>
#endif
