/// A stage of the conversion pipeline that takes decoded rows top to bottom and passes them on
/// (downscaler, orientation) or writes them (PNG, PPM, PAM). Stages are single-threaded.
protocol RowSink: AnyObject {
    /// Takes the next row of the stage's input width × channels bytes; `row` is only valid during the call.
    func consume(_ row: UnsafePointer<UInt8>) throws(DownloadError)
    /// Called once after the last row; flushes and finishes the next stage too.
    func finish() throws(DownloadError)
}
