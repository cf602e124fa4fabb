#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
// EVP SHA-256: of normalized URLs for --name hash, and of bodies for the cache index.
#include <openssl/evp.h>
#endif
