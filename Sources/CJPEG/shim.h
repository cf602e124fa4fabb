#ifndef CJPEG_SHIM_H
#define CJPEG_SHIM_H
// jpeglib.h uses FILE and size_t without including their headers itself.
#include <stdio.h>
#include <jpeglib.h>
#endif
