import ImgFetchCore

extension ShardInput {
    /// The settings that decide a shard's bytes besides its rows: what is saved and how it is sized,
    /// the shard size, the columns, whether images are decoded, the filters, and what each sample records.
    static func settings(_ options: CommandLineOptions) -> String {
        // webdataset/2: columns at the top level of KEY.json, with img2dataset's status fields.
        var parts = ["webdataset/2", "shard-samples=\(options.shardSamples)", "save-as=\(options.saveAs.rawValue)"]
        if let quality = options.quality { parts.append("quality=\(quality)") }
        // What transparency is flattened onto (JPEG); black, unnamed, before --background.
        if options.saveAs == .jpeg && options.background != .black { parts.append("background=\(options.background.hex)") }
        if let resize = options.downloaderConfiguration(outputDirectory: ".").resize {
            parts.append("resize=\(resize.size):\(resize.fit.rawValue):\(resize.upscale ? "upscale" : "no-upscale"):\(resize.padColor.hex)")
        }
        parts += ["input-format=\(options.table.format.rawValue)", "url-column=\(options.table.urlColumn)",
                  "caption-column=\(options.table.captionColumn ?? "")", "key-column=\(options.table.keyColumn ?? "")",
                  "column-types=" + options.table.columnTypes.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value.rawValue)" }
                      .joined(separator: ","),
                  "decode=\(!options.noDecode)", "require-verified=\(options.requireVerified)", "max-pixels=\(options.maxPixels)",
                  "max-size=\(options.maxSize)"]
        // Named only when given, so that shards made before these options existed are still theirs.
        if options.filter.minSide > 0 { parts.append("min-size=\(options.filter.minSide)") }
        if let ratio = options.filter.maxAspectRatio { parts.append("max-aspect-ratio=\(ratio)") }
        if options.hash != .sha256 { parts.append("hash=\(options.hash.rawValue)") }
        if let verify = options.verifyHash { parts.append("verify-hash=\(verify.column):\(verify.algorithm.rawValue)") }
        if options.extractExif { parts.append("extract-exif") }
        if let shard = options.shard, shard.count > 1 { parts.append("shard=\(shard.index)/\(shard.count):\(shard.key.rawValue)") }
        return parts.joined(separator: " ")
    }
}
