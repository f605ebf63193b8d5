import Hummingbird
import Synchronization

/// Passes routes on to a router and writes each one down: Hummingbird's router cannot list its routes, and the
/// simulator's OpenAPI document is checked against the list.
final class RouteRecorder<Context: RequestContext>: RouterMethods {
    let router: Router<Context>
    private let recorded = Mutex<[SimulatorRoute]>([])

    init(_ router: Router<Context>) { self.router = router }

    /// Every route added so far, in order.
    var routes: [SimulatorRoute] { recorded.withLock { $0 } }

    @discardableResult
    func on<Responder: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method, responder: Responder) -> Self
    where Responder.Context == Context {
        recorded.withLock { $0.append(SimulatorRoute(method: method.rawValue, path: path.description)) }
        router.on(path, method: method, responder: responder)
        return self
    }

    @discardableResult
    func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
        router.add(middleware: middleware)
        return self
    }
}
