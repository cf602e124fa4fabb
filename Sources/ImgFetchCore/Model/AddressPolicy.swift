import Glibc

/// Which addresses an image request may connect to. Checked on the address libcurl is about to
/// connect to (`EasyHandleOptions`' open-socket callback), so every redirect hop, every `--resolve`
/// entry and every DNS answer is checked as connected, and a host name that resolves once to a
/// public address and then to a private one (DNS rebinding) cannot pass. A refused address gets no
/// socket: no byte is sent to it. Requests of the object store and of its credentials are not
/// image requests and are never checked.
///
/// The cloud instance-metadata addresses are refused always (no image is served there, and a
/// worker's credentials are); `--block-private` refuses every address that is not public.
/// `--allow-host` names host names, addresses or networks let through either way.
public struct AddressPolicy: Sendable, Equatable {
    /// `--block-private`: refuse loopback, private, link-local, shared (CGNAT), unique-local,
    /// multicast, unspecified and reserved addresses, in any IPv6 form that embeds them.
    public var blockPrivate = false
    /// Host names let through whatever they resolve to: exact names, or `.example.com` for its subdomains.
    public private(set) var allowedHosts: [String] = []
    /// Networks let through (`--allow-host 10.1.0.0/16`; an address alone is one address).
    public private(set) var allowedNetworks: [IPNetwork] = []

    public init(blockPrivate: Bool = false) {
        self.blockPrivate = blockPrivate
    }

    /// Adds an `--allow-host` value: an address or network (CIDR), or else a host name. False when
    /// it is neither (a network with a bad prefix, an empty name).
    public mutating func allow(_ text: String) -> Bool {
        if let network = IPNetwork(text) {
            allowedNetworks.append(network)
            return true
        }
        guard !text.contains("/"), IPNetwork.address(text) == nil else { return false }
        let name = Self.lowercased(text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text)
        guard !name.isEmpty, name != ".", !name.contains(where: { $0 == " " || $0 == ":" }) else { return false }
        allowedHosts.append(name)
        return true
    }

    /// Why a connection for `host` to `address` (16 bytes; IPv4 as `::ffff:a.b.c.d`) is refused,
    /// as the error message of class `blocked`; nil when it may be made.
    public func refusal(host: String, address: [UInt8]) -> String? {
        guard address.count == 16, let kind = Self.kind(of: address) else { return nil }
        if kind != .metadata && !blockPrivate { return nil }
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if allowedHosts.contains(where: { Self.matches(bareHost, $0) }) { return nil }
        if allowedNetworks.contains(where: { $0.contains(address) }) { return nil }
        let text = IPNetwork.text(of: address)
        let subject = IPNetwork.address(bareHost) == nil ? "\(bareHost) resolves to \(text), \(kind.phrase)" : "\(text) is \(kind.phrase)"
        let exception = "--allow-host \(IPNetwork.address(bareHost) == nil ? bareHost : text) lets it through"
        return kind == .metadata
            ? "\(subject), never fetched as an image (\(exception))"
            : "\(subject) (--block-private; \(exception))"
    }

    /// Whether `host` is the allowed name (or under `.name`); a trailing dot (`example.com.`, the
    /// same name written fully qualified) is not a difference.
    private static func matches(_ host: String, _ allowed: String) -> Bool {
        let name = host.hasSuffix(".") ? String(host.dropLast()) : host
        let wanted = allowed.count > 1 && allowed.hasSuffix(".") ? String(allowed.dropLast()) : allowed
        return wanted.hasPrefix(".") ? name.hasSuffix(wanted) : name == wanted
    }

    private static func lowercased(_ text: String) -> String {
        String(decoding: text.utf8.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }

    /// What is not a public address, by kind.
    enum Kind: Equatable {
        case metadata, unspecified, loopback, privateNetwork, linkLocal, shared, uniqueLocal, multicast, reserved

        var phrase: String {
            switch self {
            case .metadata: "the cloud instance-metadata address"
            case .unspecified: "the unspecified address"
            case .loopback: "a loopback address"
            case .privateNetwork: "a private address"
            case .linkLocal: "a link-local address"
            case .shared: "a shared (CGNAT) address"
            case .uniqueLocal: "a unique-local address"
            case .multicast: "a multicast address"
            case .reserved: "a reserved address"
            }
        }
    }

    /// The addresses of instance-metadata services: AWS, GCP, Azure, OpenStack and others'
    /// 169.254.169.254, ECS's task credentials at 169.254.170.2, EKS Pod Identity's 169.254.170.23,
    /// Alibaba's 100.100.100.200, and AWS's IPv6 fd00:ec2::254 and fd00:ec2::23.
    static let metadataAddresses: [[UInt8]] = [
        IPNetwork.mapped([169, 254, 169, 254]), IPNetwork.mapped([169, 254, 170, 2]), IPNetwork.mapped([169, 254, 170, 23]),
        IPNetwork.mapped([100, 100, 100, 200]),
        [0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54],
        [0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x23],
    ]

    /// The kind of a non-public address, nil for a public one. IPv6 forms that carry an IPv4
    /// address (mapped, compatible, NAT64, 6to4) are judged by the IPv4 address they carry.
    static func kind(of address: [UInt8]) -> Kind? {
        if metadataAddresses.contains(address) { return .metadata }
        if let v4 = embeddedIPv4(address) {
            let carried = IPNetwork.mapped(v4)
            if carried != address && metadataAddresses.contains(carried) { return .metadata }
            return kind(ofIPv4: v4)
        }
        if address.allSatisfy({ $0 == 0 }) { return .unspecified }
        if address.dropLast().allSatisfy({ $0 == 0 }) && address[15] == 1 { return .loopback }
        switch address[0] {
        case 0xff: return .multicast
        case 0xfc, 0xfd: return .uniqueLocal
        case 0xfe where address[1] & 0xc0 == 0x80: return .linkLocal
        case 0xfe where address[1] & 0xc0 == 0xc0: return .reserved  // fec0::/10, the old site-local
        case 0x00 where address[0..<6] == [0, 0x64, 0xff, 0x9b, 0, 1]: return .reserved  // 64:ff9b:1::/48, local NAT64
        default: return nil
        }
    }

    /// The IPv4 address inside `address`: `::ffff:a.b.c.d` (mapped), `::a.b.c.d` (compatible),
    /// `64:ff9b::a.b.c.d` (NAT64's well-known prefix), `2002:AABB:CCDD::/48` (6to4). The local-use
    /// NAT64 prefix `64:ff9b:1::/48` places its IPv4 address by a prefix length it does not carry:
    /// it is reserved as a whole (`kind(of:)`).
    static func embeddedIPv4(_ a: [UInt8]) -> [UInt8]? {
        let tail = Array(a[12..<16])
        if a[0..<10].allSatisfy({ $0 == 0 }) && a[10] == 0xff && a[11] == 0xff { return tail }
        if a[0..<12].allSatisfy({ $0 == 0 }) && !(tail[0] == 0 && tail[1] == 0 && tail[2] == 0 && tail[3] <= 1) { return tail }
        if a[0..<12] == [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0] { return tail }
        if a[0] == 0x20 && a[1] == 0x02 { return Array(a[2..<6]) }
        return nil
    }

    static func kind(ofIPv4 v: [UInt8]) -> Kind? {
        switch (v[0], v[1]) {
        case (0, _): return .unspecified  // 0.0.0.0/8, "this network"
        case (10, _), (172, 16...31), (192, 168): return .privateNetwork
        case (100, 64...127): return .shared
        case (127, _): return .loopback
        case (169, 254): return .linkLocal
        case (192, 0) where v[2] == 0: return .reserved  // 192.0.0.0/24, IETF protocol assignments
        case (198, 18...19): return .reserved  // benchmarking
        case (224...239, _): return .multicast
        case (240...255, _): return .reserved  // 240.0.0.0/4 and the broadcast address
        default: return nil
        }
    }
}

/// An IPv4 or IPv6 network (`10.0.0.0/8`, `fd00::/8`, or one address), held as IPv6 with IPv4
/// mapped into `::ffff:0:0/96`.
public struct IPNetwork: Sendable, Equatable {
    let address: [UInt8]
    let prefix: Int

    /// `ADDRESS` or `ADDRESS/PREFIX`; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let (address, isIPv4) = Self.parse(String(parts[0])) else { return nil }
        let width = isIPv4 ? 32 : 128
        var prefix = width
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].utf8.allSatisfy({ (48...57).contains($0) }), parts[1].count <= 3,
                  let given = Int(parts[1]), given <= width else { return nil }
            prefix = given
        }
        self.address = address
        self.prefix = isIPv4 ? prefix + 96 : prefix
    }

    /// Whether `candidate` (16 bytes) is in the network.
    func contains(_ candidate: [UInt8]) -> Bool {
        var left = prefix
        for index in 0..<16 where left > 0 {
            let bits = min(8, left)
            let mask = UInt8(truncatingIfNeeded: 0xff << (8 - bits))
            if candidate[index] & mask != address[index] & mask { return false }
            left -= bits
        }
        return true
    }

    /// An IPv4 or IPv6 address (brackets allowed around IPv6) as 16 bytes, or nil.
    static func address(_ text: String) -> [UInt8]? { parse(text)?.0 }

    private static func parse(_ text: String) -> ([UInt8], Bool)? {
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        var v4 = in_addr()
        if inet_pton(AF_INET, bare, &v4) == 1 {
            return (withUnsafeBytes(of: &v4) { mapped(Array($0)) }, true)
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, bare, &v6) == 1 {
            return (withUnsafeBytes(of: &v6) { Array($0) }, false)
        }
        return nil
    }

    static func mapped(_ v4: [UInt8]) -> [UInt8] { [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] + v4 }

    /// The address as people write it: dotted for IPv4 (mapped), RFC 5952 for IPv6.
    static func text(of address: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        if address[0..<12] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] {
            return address[12..<16].map(String.init).joined(separator: ".")
        }
        var v6 = in6_addr()
        withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: address) }
        guard inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
