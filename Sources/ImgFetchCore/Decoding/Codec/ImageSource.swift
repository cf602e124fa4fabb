/// Where a decoder reads an image from: a file, or the bytes of a body that is still in memory
/// (a small body is decoded from there rather than written and read back).
enum ImageSource {
    case file(path: String)
    /// Must stay valid and unchanged until the decode call that reads it returns.
    case memory(UnsafeRawBufferPointer)
}
