/// EXIF tag names and the meanings of a few coded values, as the EXIF and TIFF standards name
/// them and as img2dataset's `--extract_exif` (the exifread library, `details=False`) prints them:
/// the key of a tag is its directory's name and the tag's, `Image Make`, `EXIF DateTimeOriginal`,
/// `GPS GPSLatitude`; a tag not named here is `Tag 0x9C9B`.
enum ExifTags {
    /// Tags left out, as exifread leaves them out without `details`: XMP, the maker note and the
    /// user comment (large, binary, or both).
    static let ignored: Set<UInt16> = [0x02BC, 0x927C, 0x9286]

    /// The directories that hang off another: EXIF from IFD0, GPS from IFD0, Interoperability from EXIF.
    static let subdirectories: [UInt16: ExifReader.Directory] = [0x8769: .exif, 0x8825: .gps, 0xA005: .interoperability]

    /// Tags whose bytes are text (`ExifVersion` `0230`).
    static let textBytes: Set<UInt16> = [0x9000, 0xA000, 0x0002]

    static func name(_ tag: UInt16, in directory: ExifReader.Directory) -> String {
        let table: [UInt16: String]
        switch directory {
        case .gps: table = gps
        case .interoperability: table = interoperability
        case .image, .thumbnail, .exif: table = main
        }
        if let name = table[tag] { return name }
        let digits = Array("0123456789ABCDEF")
        return "Tag 0x" + String((0..<4).map { digits[Int(tag >> (12 - 4 * $0)) & 0xF] })
    }

    /// The meaning of a coded value, for the tags whose values are codes.
    static func meaning(_ tag: UInt16, _ value: Int64) -> String? {
        values[tag]?[value]
    }

    private static let values: [UInt16: [Int64: String]] = [
        0x0112: [1: "Horizontal (normal)", 2: "Mirrored horizontal", 3: "Rotated 180", 4: "Mirrored vertical",
                 5: "Mirrored horizontal then rotated 90 CCW", 6: "Rotated 90 CW", 7: "Mirrored horizontal then rotated 90 CW",
                 8: "Rotated 90 CCW"],
        0x0128: [1: "Not Absolute", 2: "Pixels/Inch", 3: "Pixels/Centimeter"],
        0x0213: [1: "Centered", 2: "Co-sited"],
        0x8822: [0: "Unidentified", 1: "Manual", 2: "Program Normal", 3: "Aperture Priority", 4: "Shutter Priority",
                 5: "Program Creative", 6: "Program Action", 7: "Portrait Mode", 8: "Landscape Mode"],
        0x9101: [0: "", 1: "Y", 2: "Cb", 3: "Cr", 4: "Red", 5: "Green", 6: "Blue"],
        0x9207: [0: "Unidentified", 1: "Average", 2: "CenterWeightedAverage", 3: "Spot", 4: "MultiSpot", 5: "Pattern",
                 6: "Partial", 255: "other"],
        0xA001: [1: "sRGB", 2: "Adobe RGB", 65535: "Uncalibrated"],
        0xA300: [1: "Film Scanner", 2: "Reflection Print Scanner", 3: "Digital Camera"],
        0xA301: [1: "Directly Photographed"],
        0xA401: [0: "Normal", 1: "Custom"],
        0xA402: [0: "Auto Exposure", 1: "Manual Exposure", 2: "Auto Bracket"],
        0xA403: [0: "Auto", 1: "Manual"],
        0xA406: [0: "Standard", 1: "Landscape", 2: "Portrait", 3: "Night"],
        0xA408: [0: "Normal", 1: "Soft", 2: "Hard"],
        0xA409: [0: "Normal", 1: "Soft", 2: "Hard"],
        0xA40A: [0: "Normal", 1: "Soft", 2: "Hard"],
    ]

    private static let main: [UInt16: String] = [
        0x00FE: "SubfileType", 0x0100: "ImageWidth", 0x0101: "ImageLength", 0x0102: "BitsPerSample", 0x0103: "Compression",
        0x0106: "PhotometricInterpretation", 0x010D: "DocumentName", 0x010E: "ImageDescription", 0x010F: "Make",
        0x0110: "Model", 0x0111: "StripOffsets", 0x0112: "Orientation", 0x0115: "SamplesPerPixel", 0x0116: "RowsPerStrip",
        0x0117: "StripByteCounts", 0x011A: "XResolution", 0x011B: "YResolution", 0x011C: "PlanarConfiguration",
        0x0128: "ResolutionUnit", 0x012D: "TransferFunction", 0x0131: "Software", 0x0132: "DateTime", 0x013B: "Artist",
        0x013C: "HostComputer", 0x013E: "WhitePoint", 0x013F: "PrimaryChromaticities", 0x0142: "TileWidth",
        0x0143: "TileLength", 0x0201: "JPEGInterchangeFormat", 0x0202: "JPEGInterchangeFormatLength",
        0x0211: "YCbCrCoefficients", 0x0212: "YCbCrSubSampling", 0x0213: "YCbCrPositioning", 0x0214: "ReferenceBlackWhite",
        0x4746: "Rating", 0x8298: "Copyright", 0x829A: "ExposureTime", 0x829D: "FNumber", 0x83BB: "IPTC/NAA",
        0x8769: "ExifOffset", 0x8773: "InterColorProfile", 0x8822: "ExposureProgram", 0x8824: "SpectralSensitivity",
        0x8825: "GPSInfo", 0x8827: "ISOSpeedRatings", 0x8830: "SensitivityType", 0x8832: "RecommendedExposureIndex",
        0x8833: "ISOSpeed", 0x9000: "ExifVersion", 0x9003: "DateTimeOriginal", 0x9004: "DateTimeDigitized",
        0x9010: "OffsetTime", 0x9011: "OffsetTimeOriginal", 0x9012: "OffsetTimeDigitized", 0x9101: "ComponentsConfiguration",
        0x9102: "CompressedBitsPerPixel", 0x9201: "ShutterSpeedValue", 0x9202: "ApertureValue", 0x9203: "BrightnessValue",
        0x9204: "ExposureBiasValue", 0x9205: "MaxApertureValue", 0x9206: "SubjectDistance", 0x9207: "MeteringMode",
        0x9208: "LightSource", 0x9209: "Flash", 0x920A: "FocalLength", 0x9214: "SubjectArea", 0x9290: "SubSecTime",
        0x9291: "SubSecTimeOriginal", 0x9292: "SubSecTimeDigitized", 0xA000: "FlashPixVersion", 0xA001: "ColorSpace",
        0xA002: "ExifImageWidth", 0xA003: "ExifImageLength", 0xA005: "InteroperabilityOffset",
        0xA20E: "FocalPlaneXResolution", 0xA20F: "FocalPlaneYResolution", 0xA210: "FocalPlaneResolutionUnit",
        0xA214: "SubjectLocation", 0xA215: "ExposureIndex", 0xA217: "SensingMethod", 0xA300: "FileSource",
        0xA301: "SceneType", 0xA302: "CVAPattern", 0xA401: "CustomRendered", 0xA402: "ExposureMode", 0xA403: "WhiteBalance",
        0xA404: "DigitalZoomRatio", 0xA405: "FocalLengthIn35mmFilm", 0xA406: "SceneCaptureType", 0xA407: "GainControl",
        0xA408: "Contrast", 0xA409: "Saturation", 0xA40A: "Sharpness", 0xA40C: "SubjectDistanceRange",
        0xA420: "ImageUniqueID", 0xA430: "CameraOwnerName", 0xA431: "BodySerialNumber", 0xA432: "LensSpecification",
        0xA433: "LensMake", 0xA434: "LensModel", 0xA435: "LensSerialNumber", 0xA500: "Gamma", 0xC4A5: "PrintIM",
        0xEA1C: "Padding", 0xEA1D: "OffsetSchema",
    ]

    private static let gps: [UInt16: String] = [
        0x00: "GPSVersionID", 0x01: "GPSLatitudeRef", 0x02: "GPSLatitude", 0x03: "GPSLongitudeRef", 0x04: "GPSLongitude",
        0x05: "GPSAltitudeRef", 0x06: "GPSAltitude", 0x07: "GPSTimeStamp", 0x08: "GPSSatellites", 0x09: "GPSStatus",
        0x0A: "GPSMeasureMode", 0x0B: "GPSDOP", 0x0C: "GPSSpeedRef", 0x0D: "GPSSpeed", 0x0E: "GPSTrackRef", 0x0F: "GPSTrack",
        0x10: "GPSImgDirectionRef", 0x11: "GPSImgDirection", 0x12: "GPSMapDatum", 0x13: "GPSDestLatitudeRef",
        0x14: "GPSDestLatitude", 0x15: "GPSDestLongitudeRef", 0x16: "GPSDestLongitude", 0x17: "GPSDestBearingRef",
        0x18: "GPSDestBearing", 0x19: "GPSDestDistanceRef", 0x1A: "GPSDestDistance", 0x1B: "GPSProcessingMethod",
        0x1C: "GPSAreaInformation", 0x1D: "GPSDate", 0x1E: "GPSDifferential",
    ]

    private static let interoperability: [UInt16: String] = [
        0x0001: "InteroperabilityIndex", 0x0002: "InteroperabilityVersion", 0x1000: "RelatedImageFileFormat",
        0x1001: "RelatedImageWidth", 0x1002: "RelatedImageLength",
    ]
}
