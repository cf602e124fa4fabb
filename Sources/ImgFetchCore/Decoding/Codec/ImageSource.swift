/// Where a decoder reads an image from: a file, or the bytes of a body that is still in memory
/// (a small body is decoded from there rather than written and read back).
enum ImageSource {
    case file(path: String)
    /// An open file read from its start, for a file without a name (an unnamed temp file) or one
    /// that must be the very file already opened. The decoder moves its offset and leaves it open.
    case descriptor(Int32)
    /// Must stay valid and unchanged until the decode call that reads it returns.
    case memory(UnsafeRawBufferPointer)
}
