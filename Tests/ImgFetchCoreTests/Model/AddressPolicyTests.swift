@testable import ImgFetchCore
import XCTest

/// `AddressPolicy`: which addresses `--block-private` refuses, in every form that carries them,
/// what is always refused, and what `--allow-host` lets through.
final class AddressPolicyTests: XCTestCase {
    private func address(_ text: String) throws -> [UInt8] { try XCTUnwrap(IPNetwork.address(text), text) }

    private func kind(_ text: String) throws -> AddressPolicy.Kind? { AddressPolicy.kind(of: try address(text)) }

    func testEveryKindOfNonPublicAddressIsKnownInEachForm() throws {
        let expected: [(String, AddressPolicy.Kind)] = [
            ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified), ("::", .unspecified),
            ("127.0.0.1", .loopback), ("127.255.255.254", .loopback), ("::1", .loopback),
            ("10.0.0.1", .privateNetwork), ("172.16.0.1", .privateNetwork), ("172.31.255.255", .privateNetwork),
            ("192.168.1.1", .privateNetwork),
            ("100.64.0.1", .shared), ("100.127.255.255", .shared),
            ("169.254.1.1", .linkLocal), ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
            ("fc00::1", .uniqueLocal), ("fd12:3456::1", .uniqueLocal),
            ("224.0.0.1", .multicast), ("239.255.255.250", .multicast), ("ff02::1", .multicast),
            ("240.0.0.1", .reserved), ("255.255.255.255", .reserved), ("fec0::1", .reserved),
            ("169.254.169.254", .metadata), ("169.254.170.2", .metadata), ("100.100.100.200", .metadata),
            ("fd00:ec2::254", .metadata),
            // IPv6 forms that carry an IPv4 address are judged by it.
            ("::ffff:127.0.0.1", .loopback), ("::ffff:10.1.2.3", .privateNetwork), ("::ffff:169.254.169.254", .metadata),
            ("::127.0.0.1", .loopback), ("64:ff9b::10.0.0.1", .privateNetwork), ("64:ff9b:1::192.168.0.1", .reserved),
            ("64:ff9b:1:c0a8::1", .reserved), ("169.254.170.23", .metadata), ("fd00:ec2::23", .metadata),
            ("64:ff9b::169.254.169.254", .metadata), ("2002:7f00:1::", .loopback), ("2002:a9fe:a9fe::1", .metadata),
        ]
        for (text, kind) in expected {
            XCTAssertEqual(try self.kind(text), kind, text)
        }
    }

    func testPublicAddressesPass() throws {
        for text in ["8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.1", "172.15.255.255", "172.32.0.1",
                     "192.167.1.1", "169.253.1.1", "223.255.255.255", "2606:4700:4700::1111", "2a00:1450:4001::200e",
                     "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:0808:0808::1"] {
            XCTAssertNil(try kind(text), text)
            XCTAssertNil(AddressPolicy(blockPrivate: true).refusal(host: "example.com", address: try address(text)), text)
        }
    }

    func testOnlyTheMetadataAddressIsRefusedWithoutTheOption() throws {
        let policy = AddressPolicy()
        XCTAssertNil(policy.refusal(host: "127.0.0.1", address: try address("127.0.0.1")))
        XCTAssertNil(policy.refusal(host: "nas.lan", address: try address("192.168.1.10")))
        XCTAssertEqual(policy.refusal(host: "meta.test", address: try address("169.254.169.254")),
                       "meta.test resolves to 169.254.169.254, the cloud instance-metadata address, never fetched as an image "
                           + "(--allow-host meta.test lets it through)")
        XCTAssertEqual(AddressPolicy(blockPrivate: true).refusal(host: "[::ffff:10.0.0.5]", address: try address("::ffff:10.0.0.5")),
                       "10.0.0.5 is a private address (--block-private; --allow-host 10.0.0.5 lets it through)")
    }

    func testAllowedHostsAndNetworksPass() throws {
        var policy = AddressPolicy(blockPrivate: true)
        for value in ["Pics.Internal", ".mirror.test", "10.1.0.0/16", "fd00::/8", "192.168.1.7", "[::1]"] {
            XCTAssertTrue(policy.allow(value), value)
        }
        XCTAssertNil(policy.refusal(host: "pics.internal", address: try address("10.9.9.9")))
        XCTAssertNil(policy.refusal(host: "pics.internal.", address: try address("10.9.9.9")), "the fully qualified name is the same")
        XCTAssertNil(policy.refusal(host: "a.mirror.test", address: try address("127.0.0.1")))
        XCTAssertNotNil(policy.refusal(host: "mirror.test.evil", address: try address("127.0.0.1")))
        XCTAssertNil(policy.refusal(host: "x.test", address: try address("10.1.255.1")))
        XCTAssertNotNil(policy.refusal(host: "x.test", address: try address("10.2.0.1")))
        XCTAssertNil(policy.refusal(host: "x.test", address: try address("fd99::1")))
        XCTAssertNil(policy.refusal(host: "x.test", address: try address("192.168.1.7")))
        XCTAssertNotNil(policy.refusal(host: "x.test", address: try address("192.168.1.8")))
        XCTAssertNil(policy.refusal(host: "x.test", address: try address("::1")))
        // A network of IPv4 covers its addresses in their mapped IPv6 form, as connected.
        XCTAssertNil(policy.refusal(host: "x.test", address: try address("::ffff:10.1.0.9")))
        for value in ["10.0.0.0/33", "fd00::/129", "10.0.0.0/", "10.0.0.0/x", "", ".", "a b", "a:b"] {
            XCTAssertFalse(policy.allow(value), value)
        }
    }
}
