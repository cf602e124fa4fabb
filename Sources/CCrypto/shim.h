#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
// Only the one-shot EVP digest is used: SHA-256 of normalized URLs for --name hash.
#include <openssl/evp.h>
#endif
