import NIOSSL
import PostgresNIO

/// How the connection to PostgreSQL is protected (`db.postgres.tls`, `db.postgres.tlsRootCertificate`).
///
/// With TLS the server's certificate is always verified, chain and host name: against `caFile` when given (a
/// private CA, a self-signed server), otherwise against the system's trust roots.
public struct PostgresTLS: Sendable, Hashable {
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// Plain TCP (loopback, a private network).
        case disable
        /// TLS when the server offers it.
        case prefer
        /// TLS or no connection.
        case require
    }

    public var mode: Mode
    /// PEM file of the certificate authority (or the self-signed certificate) the server's certificate must chain to.
    public var caFile: String?

    public init(mode: Mode = .disable, caFile: String? = nil) {
        self.mode = mode
        self.caFile = caFile
    }

    func clientTLS() throws -> PostgresClient.Configuration.TLS {
        guard mode != .disable else { return .disable }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        if let caFile {
            do {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            } catch {
                throw StorageError.configuration("cannot read db.postgres.tlsRootCertificate \(caFile): \(error)")
            }
        }
        return mode == .require ? .require(configuration) : .prefer(configuration)
    }
}
