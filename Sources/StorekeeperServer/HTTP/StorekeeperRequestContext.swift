import Hummingbird
import NIOCore

/// The request context of every Storekeeper route: Hummingbird's core storage plus the caller's address, which
/// the webhook uses to count refused bodies per source.
public struct StorekeeperRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
