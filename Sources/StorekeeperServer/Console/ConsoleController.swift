import AppStoreWire
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Mustache
import NIOCore
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLedger
import StorekeeperServerAPI
import StorekeeperStorage
import Synchronization

/// The operator console at `/admin`: server-rendered pages for support, operations and finance, usable without
/// JavaScript. Operators sign in with their name and secret (``ConsoleConfiguration``) into a session cookie
/// (HttpOnly, SameSite=Strict, Secure behind TLS); every form carries the session's CSRF token; roles decide who may
/// act; every action is written to the operator log with the operator's name, and through the same operations as
/// the admin API (so to the customer's audit too, with the operator as the admin).
struct ConsoleController: Sendable {
    let configuration: ConsoleConfiguration
    let store: ConsoleStore
    let api: APIHandler
    let backlog: BacklogStore
    let risk: RiskStore
    let riskPolicy: RiskPolicy
    let library: MustacheLibrary
    let stylesheet: ByteBuffer
    let logger: Logger
    /// Figures that read a month of transactions or the whole review list, kept a minute.
    let cache = ConsoleCache(maxAge: 60)
    /// Wrong secrets per operator and per address, and their lockouts.
    let throttle = SignInThrottle()

    static let sessionCookie = "sk_console"
    static let loginCookie = "sk_console_login"
    static let maximumFormBytes = 64 * 1024

    /// The templates and stylesheet bundled with the server, read once at start.
    static func load(
        configuration: ConsoleConfiguration,
        store: ConsoleStore,
        api: APIHandler,
        backlog: BacklogStore,
        risk: RiskStore,
        riskPolicy: RiskPolicy,
        logger: Logger
    ) throws -> ConsoleController {
        guard let templates = Bundle.module.url(forResource: "Templates", withExtension: nil),
            let assets = Bundle.module.url(forResource: "Assets", withExtension: nil)
        else {
            throw StorekeeperError(.internal, code: "console_missing", message: "the console's templates are not in the server's bundle")
        }
        var library = MustacheLibrary()
        for file in try FileManager.default.contentsOfDirectory(atPath: templates.path) where file.hasSuffix(".mustache") {
            let text = try String(contentsOf: templates.appendingPathComponent(file), encoding: .utf8)
            try library.register(text, named: String(file.dropLast(".mustache".count)))
        }
        return ConsoleController(
            configuration: configuration,
            store: store,
            api: api,
            backlog: backlog,
            risk: risk,
            riskPolicy: riskPolicy,
            library: library,
            stylesheet: ByteBuffer(bytes: Array(try Data(contentsOf: assets.appendingPathComponent("console.css")))),
            logger: logger
        )
    }

    /// A signed-in operator, for one request.
    struct Operator: Sendable {
        var session: ConsoleStore.Session
        var role: ConsoleRole
        /// The request's context, for running admin operations as this operator.
        var context: StorekeeperRequestContext
        var name: String { session.operatorName }

        var view: [String: Any] { ["operator": name, "role": role.rawValue, "csrf": session.csrf] }
        func holds(_ scope: AdminScope) -> Bool { role.holds(scope) }
    }

    /// Why a request ends before its page: sign in first, not allowed, or a form that cannot be used.
    enum Refusal: Error {
        case signIn
        case forbidden(String)
        case badForm(String)
    }

    func add(to router: Router<StorekeeperRequestContext>) {
        let admin = router.group("admin")
        admin.get("assets/console.css") { _, _ in
            var headers = Self.securityHeaders
            headers[.contentType] = "text/css; charset=utf-8"
            headers[.cacheControl] = "max-age=3600"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: stylesheet))
        }
        admin.get("login") { request, _ in try loginPage(request, failure: nil) }
        admin.post("login") { request, context in try await signIn(request, from: context.clientAddress) }
        admin.post("logout") { request, context in
            try await page(request, context, needs: nil, form: true) { signedIn, _ in
                try await api.ledger.closeConsoleSession(signedIn.session.tokenHash)
                var response = Self.redirect("/admin/login")
                response.setCookie(cookie(Self.sessionCookie, "", maxAge: 0, request))
                return response
            }
        }
        admin.get { request, context in try await page(request, context, needs: .reportsRead) { signedIn, _ in try await overview(signedIn) } }
        admin.get("analytics") { request, context in
            try await page(request, context, needs: .reportsRead) { signedIn, _ in try await analytics(request, signedIn) }
        }
        admin.get("analytics.csv") { request, context in
            try await page(request, context, needs: .reportsRead) { _, _ in try await analyticsCSV(request, cohorts: false) }
        }
        admin.get("analytics/cohorts.csv") { request, context in
            try await page(request, context, needs: .reportsRead) { _, _ in try await analyticsCSV(request, cohorts: true) }
        }
        admin.get("analytics/contributors") { request, context in
            try await page(request, context, needs: .usersRead) { signedIn, _ in try await analyticsContributors(request, signedIn) }
        }
        admin.get("find") { request, context in
            try await page(request, context, needs: .usersRead) { signedIn, _ in try await find(request, signedIn) }
        }
        admin.get("customers/:user") { request, context in
            try await page(request, context, needs: .usersRead) { signedIn, _ in
                try await existingCustomer(context, signedIn) { try await customer($0, request, signedIn) }
            }
        }
        admin.post("customers/:user/wallet") { request, context in
            try await page(request, context, needs: .walletWrite, form: true) { signedIn, form in
                try await existingCustomer(context, signedIn) { try await adjustWallet($0, form, signedIn) }
            }
        }
        admin.post("customers/:user/entitlements/grant") { request, context in
            try await page(request, context, needs: .usersWrite, form: true) { signedIn, form in
                try await existingCustomer(context, signedIn) { try await grantEntitlement($0, form, signedIn) }
            }
        }
        admin.post("customers/:user/entitlements/revoke") { request, context in
            try await page(request, context, needs: .usersWrite, form: true) { signedIn, form in
                try await existingCustomer(context, signedIn) { try await revokeEntitlement($0, form, signedIn) }
            }
        }
        admin.post("customers/:user/subscriptions/:original/extend") { request, context in
            try await page(request, context, needs: .usersWrite, form: true) { signedIn, form in
                let original = try Self.parameter(context, "original")
                return try await existingCustomer(context, signedIn) { try await extendRenewal($0, original, form, signedIn) }
            }
        }
        admin.post("customers/:user/catch-up") { request, context in
            try await page(request, context, needs: .usersWrite, form: true) { signedIn, _ in
                try await existingCustomer(context, signedIn) { try await catchUp($0, signedIn) }
            }
        }
        admin.get("notifications") { request, context in
            try await page(request, context, needs: .notificationsRead) { signedIn, _ in try await notifications(request, signedIn) }
        }
        admin.get("notifications/:id") { request, context in
            try await page(request, context, needs: .notificationsRead) { signedIn, _ in
                try await notification(try Self.parameter(context, "id"), signedIn)
            }
        }
        admin.get("review") { request, context in try await page(request, context, needs: .usersRead) { signedIn, _ in try await review(signedIn) } }
        admin.post("notifications/:id/retry") { request, context in
            try await page(request, context, needs: .notificationsWrite, form: true) { signedIn, _ in
                try await retry(try Self.parameter(context, "id"), signedIn)
            }
        }
        admin.get("pending") { request, context in
            try await page(request, context, needs: .usersRead) { signedIn, _ in try await pending(signedIn, flash: nil) }
        }
        admin.post("pending/:transaction/assign") { request, context in
            try await page(request, context, needs: .usersWrite, form: true) { signedIn, form in
                try await assign(try Self.parameter(context, "transaction"), form, signedIn)
            }
        }
        admin.get("catalog") { request, context in
            try await page(request, context, needs: .catalogRead) { signedIn, _ in try catalog(signedIn, flash: nil) }
        }
        admin.get("catalog/products/:id") { request, context in
            try await page(request, context, needs: .catalogWrite) { signedIn, _ in
                try product(try Self.parameter(context, "id"), signedIn, failure: nil)
            }
        }
        admin.post("catalog/products/:id") { request, context in
            try await page(request, context, needs: .catalogWrite, form: true) { signedIn, form in
                try await saveProduct(try Self.parameter(context, "id"), form, signedIn)
            }
        }
        admin.post("catalog/campaigns/:id") { request, context in
            try await page(request, context, needs: .catalogWrite, form: true) { signedIn, form in
                try await saveCampaign(try Self.parameter(context, "id"), form, signedIn)
            }
        }
        admin.get("webhooks") { request, context in
            try await page(request, context, needs: .eventsRead) { signedIn, _ in try await webhooks(signedIn, flash: nil) }
        }
        admin.post("webhooks/:name/:action") { request, context in
            try await page(request, context, needs: .webhooksWrite, form: true) { signedIn, form in
                try await controlWebhook(try Self.parameter(context, "name"), try Self.parameter(context, "action"), form, signedIn)
            }
        }
        admin.get("jobs") { request, context in
            try await page(request, context, needs: .reportsRead) { signedIn, _ in try await jobs(signedIn, flash: nil) }
        }
        admin.post("jobs/:job/run") { request, context in
            try await page(request, context, needs: .jobsRun, form: true) { signedIn, _ in
                try await runJob(try Self.parameter(context, "job"), signedIn)
            }
        }
    }

    // MARK: Sessions

    /// Runs `body` for a signed-in operator whose role holds `scope` (any signed-in operator for `nil`); a form's
    /// CSRF token must be the session's.
    func page(
        _ request: Request,
        _ context: StorekeeperRequestContext,
        needs scope: AdminScope?,
        form: Bool = false,
        _ body: (Operator, [String: String]) async throws -> Response
    ) async throws -> Response {
        do {
            guard let token = request.cookies[Self.sessionCookie]?.value, !token.isEmpty, token.utf8.count <= 128,
                let session = try await store.session(Self.digest(token), now: Date()),
                let sessionRole = ConsoleRole(rawValue: session.role)
            else { throw Refusal.signIn }
            let signedIn = Operator(session: session, role: sessionRole, context: context)
            var fields: [String: String] = [:]
            if form {
                fields = try await Self.form(request)
                guard let csrf = fields["csrf"], Self.equal(csrf, session.csrf) else {
                    logger.warning("console form refused: no valid CSRF token", metadata: ["operator": "\(session.operatorName)"])
                    throw Refusal.badForm("The form was refused: its security token is missing or stale. Reload the page and try again.")
                }
            }
            if let scope, !signedIn.holds(scope) {
                let roles = ConsoleRole.allCases.filter { $0.holds(scope) }.map(\.rawValue).joined(separator: " or ")
                throw Refusal.forbidden(
                    "\(sessionRole.rawValue.capitalized)s cannot do this; it needs the \(scope.rawValue) scope (the \(roles) role)."
                )
            }
            return try await body(signedIn, fields)
        } catch Refusal.signIn {
            // A page asked for without a session goes to the sign-in page; a form is refused outright.
            return request.method == .get ? Self.redirect("/admin/login") : try render("error", title: "Sign in first", status: .unauthorized, [:])
        } catch Refusal.forbidden(let message) {
            return try render("error", title: "Not allowed", status: .forbidden, ["failure": message])
        } catch Refusal.badForm(let message) {
            return try render("error", title: "Refused", status: .forbidden, ["failure": message])
        }
    }

    func loginPage(_ request: Request, failure: String?, status: HTTPResponse.Status = .ok) throws -> Response {
        let nonce = Self.randomToken()
        var response = try render("login", title: "Sign in", status: status, ["nonce": nonce, "failure": failure as Any])
        response.setCookie(cookie(Self.loginCookie, nonce, maxAge: 1_800, request))
        return response
    }

    func signIn(_ request: Request, from address: String?) async throws -> Response {
        let fields: [String: String]
        do {
            fields = try await Self.form(request)
        } catch {
            return try loginPage(request, failure: "The form could not be read.", status: .badRequest)
        }
        // Login CSRF: the form's nonce must be the one this browser was given with the form.
        guard let nonce = fields["nonce"], let expected = request.cookies[Self.loginCookie]?.value, Self.equal(nonce, expected) else {
            return try loginPage(request, failure: "The sign-in form expired. Try again.", status: .forbidden)
        }
        let name = fields["name"] ?? ""
        // The name field as typed is never logged (a secret typed there by mistake would land in the log): only a
        // name that is one of the configured operators'.
        let shownName = Self.loggableName(name, operators: configuration.operators)
        let known = shownName == name
        let keys = ["operator:" + (known ? name : "?unknown"), "address:" + (address ?? "unknown")]
        if let until = throttle.lockedUntil(keys) {
            logger.notice("console sign-in refused: locked out", metadata: ["operator": "\(shownName)", "address": "\(address ?? "unknown")"])
            let minutes = max(1, Int((until.timeIntervalSinceNow / 60).rounded(.up)))
            return try loginPage(request, failure: "Too many wrong secrets: try again in \(minutes) minute(s).", status: .tooManyRequests)
        }
        guard let found = configuration.signIn(name: name, secret: fields["secret"] ?? "") else {
            logger.notice("console sign-in refused", metadata: ["operator": "\(shownName)", "address": "\(address ?? "unknown")"])
            for key in throttle.failed(keys) {
                logger.warning(
                    "console sign-in locked out after \(SignInThrottle.maximumFailures) wrong secrets",
                    metadata: [
                        "key": "\(key.hasPrefix("operator:") ? "operator:" + shownName : key)", "minutes": "\(Int(SignInThrottle.lockout / 60))",
                    ]
                )
            }
            return try loginPage(request, failure: "Unknown operator or wrong secret.", status: .unauthorized)
        }
        throttle.succeeded(keys)
        let token = Self.randomToken()
        let now = Date()
        let session = ConsoleStore.Session(
            tokenHash: Self.digest(token),
            operatorName: found.name,
            role: found.role.rawValue,
            csrf: Self.randomToken(),
            createdAt: now,
            expiresAt: now.addingTimeInterval(Double(configuration.sessionLifetime.components.seconds))
        )
        try await api.ledger.openConsoleSession(session)
        logger.info("console sign-in", metadata: ["operator": "\(found.name)", "role": "\(found.role.rawValue)"])
        var response = Self.redirect("/admin")
        response.setCookie(cookie(Self.sessionCookie, token, maxAge: Int(configuration.sessionLifetime.components.seconds), request))
        response.setCookie(cookie(Self.loginCookie, "", maxAge: 0, request))
        return response
    }

    /// What a sign-in's name field may be logged as: the name when it is a configured operator's, else a placeholder
    /// (what was typed may be a secret typed into the wrong field).
    static func loggableName(_ name: String, operators: [ConsoleConfiguration.Operator]) -> String {
        operators.contains { Array($0.name.utf8) == Array(name.utf8) } ? name : "(not an operator)"
    }

    /// A console cookie: HttpOnly, SameSite=Strict, and Secure when the console is reached over TLS.
    func cookie(_ name: String, _ value: String, maxAge: Int, _ request: Request) -> Cookie {
        Cookie(
            name: name,
            value: value,
            maxAge: maxAge,
            path: "/admin",
            secure: Self.overTLS(request, configured: configuration.secureCookies),
            httpOnly: true,
            sameSite: .strict
        )
    }

    /// Whether the browser reached the console over TLS: configured so, or told by the TLS-terminating proxy in front
    /// (`X-Forwarded-Proto: https`, `Forwarded: proto=https`). A forged header can only make the forger's own
    /// cookie Secure, which their browser then withholds over plain HTTP: it weakens nobody else.
    static func overTLS(_ request: Request, configured: Bool) -> Bool {
        if configured || request.uri.scheme == .https { return true }
        if let proto = request.headers[HTTPField.Name("X-Forwarded-Proto")!] {
            if proto.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).lowercased() == "https" { return true }
        }
        if let forwarded = request.headers[HTTPField.Name("Forwarded")!] {
            let first = forwarded.split(separator: ",").first ?? ""
            for pair in first.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                if parts.count == 2, parts[0] == "proto", parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == "https" { return true }
            }
        }
        return false
    }

    // MARK: Rendering

    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy:
            "default-src 'self'; img-src 'self' data:; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        HTTPField.Name("X-Frame-Options")!: "DENY",
        .xContentTypeOptions: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "same-origin",
    ]

    func render(
        _ template: String,
        title: String,
        status: HTTPResponse.Status = .ok,
        _ values: [String: Any],
        signedIn: Operator? = nil
    ) throws
        -> Response
    {
        // An absent optional is left out, so a `{{#flash}}` section stays closed instead of showing "nil".
        var object: [String: Any] = [:]
        for (key, value) in values {
            if let present = Self.unwrap(value) { object[key] = present }
        }
        object["title"] = title
        if let signedIn { object["session"] = signedIn.view }
        guard let html = library.render(object, withTemplate: template) else {
            throw StorekeeperError(.internal, code: "console_template", message: "no console template \(template)")
        }
        var headers = Self.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static func unwrap(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let wrapped = mirror.children.first else { return nil }
        return unwrap(wrapped.value)
    }

    /// A page that only says what went wrong.
    func problem(_ title: String, _ status: HTTPResponse.Status, _ message: String, signedIn: Operator?) throws -> Response {
        let values: [String: Any] = ["failure": message]
        return try render("error", title: title, status: status, values, signedIn: signedIn)
    }

    static func redirect(_ location: String) -> Response {
        var headers = securityHeaders
        headers[.location] = location
        headers[.cacheControl] = "no-store"
        return Response(status: .seeOther, headers: headers)
    }

    /// Runs one of the admin API's operations as the signed-in operator (the operator's name is the admin the
    /// operation audits).
    func asOperator<T: Sendable>(_ signedIn: Operator, _ body: () async throws -> T) async throws -> T {
        var scope = signedIn.context
        scope.caller = .admin(AdminCaller(name: signedIn.name, scopes: signedIn.role.scopes))
        return try await RequestScope.$context.withValue(scope) { try await body() }
    }

    /// Runs an action that makes one change, its operator-log line committed in the change's own transaction (or
    /// on its own after an action that wrote nothing, such as a request to Apple); a failed action is not logged.
    func logged<T: Sendable>(
        _ signedIn: Operator,
        _ action: String,
        subject: String,
        detail: String?,
        _ body: () async throws -> T
    ) async throws -> T {
        let line = OperatorAction(operatorName: signedIn.name, role: signedIn.role.rawValue, action: action, subject: subject, detail: detail)
        let result = try await api.ledger.logging(line, body)
        logger.info("console action", metadata: ["operator": "\(signedIn.name)", "action": "\(action)", "subject": "\(subject)"])
        return result
    }

    /// Records, after it ended, an action of several changes whose line tells what they came to (a job's run, a
    /// catch-up).
    func log(_ signedIn: Operator, _ action: String, subject: String, detail: String?) async throws {
        try await api.ledger.recordOperatorAction(
            OperatorAction(operatorName: signedIn.name, role: signedIn.role.rawValue, action: action, subject: subject, detail: detail)
        )
        logger.info("console action", metadata: ["operator": "\(signedIn.name)", "action": "\(action)", "subject": "\(subject)"])
    }

    static func message(of error: any Error) -> String {
        if let error = StorekeeperError(error) { return error.message }
        if let error = error as? CatalogError { return error.description }
        return "\(error)"
    }

    // MARK: Forms and values

    /// An `application/x-www-form-urlencoded` body, bounded.
    static func form(_ request: Request) async throws -> [String: String] {
        let body = try await request.body.collect(upTo: maximumFormBytes)
        let text = String(buffer: body)
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String? { String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = parts.first.flatMap(decode) else { throw Refusal.badForm("The form could not be read.") }
            fields[name] = parts.count > 1 ? decode(parts[1]) ?? "" : ""
        }
        return fields
    }

    /// A path segment, percent-decoded exactly once (the router hands it over as sent: `erin%2Biap%40example.com`
    /// names `erin+iap@example.com`), at most 200 bytes without control characters.
    static func parameter(_ context: StorekeeperRequestContext, _ name: String) throws -> String {
        guard let raw = context.parameters.get(name), let value = raw.removingPercentEncoding, !value.isEmpty, value.utf8.count <= 200,
            !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw Refusal.badForm("The address names nothing usable.")
        }
        return value
    }

    /// Runs `body` with the customer the address names, decoded; a customer the server has never seen is a 404, so
    /// no operator action creates a user.
    func existingCustomer(
        _ context: StorekeeperRequestContext,
        _ signedIn: Operator,
        _ body: (String) async throws -> Response
    ) async throws -> Response {
        let id = try Self.parameter(context, "user")
        guard let user = UserID.any(id), try await api.accounts.exists(user) else {
            return try problem("No such customer", .notFound, "There is no customer \(id).", signedIn: signedIn)
        }
        return try await body(id)
    }

    /// A query parameter of a form sent with GET, decoded as a form is (`+` is a space, then percent-decoding once).
    static func formQuery(_ request: Request, _ name: String) -> String? {
        for pair in (request.uri.query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String? { String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            if parts.first.flatMap(decode) == name { return parts.count > 1 ? decode(parts[1]) ?? "" : "" }
        }
        return nil
    }

    static func randomToken() -> String { GuestStore.randomBase64URL(bytes: 32) }

    static func digest(_ token: String) -> String { SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined() }

    /// Constant-time comparison of two tokens.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for (p, q) in zip(x, y) { difference |= p ^ q }
        return difference == 0
    }

    static func time(_ date: Date?) -> String {
        guard let date else { return "" }
        return date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon))
    }

    static func time(millis: Int64?) -> String { millis.map { time(Date(timeIntervalSince1970: Double($0) / 1000)) } ?? "" }

    /// Milliunits as a decimal amount.
    static func money(_ milliunits: Int64) -> String { ReportMoney.text(milliunits) }

    /// A path segment, percent-encoded.
    static func link(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~:")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}

/// Values the console's heavier pages compute, kept for `maxAge` seconds in this process: an operator reloading the
/// overview does not read a month of transactions each time.
final class ConsoleCache: Sendable {
    let maxAge: TimeInterval
    private let entries = Mutex<[String: (at: Date, value: any Sendable)]>([:])

    init(maxAge: TimeInterval) { self.maxAge = maxAge }

    /// The value under `key` and when it was computed; computed again when older than ``maxAge``.
    func value<T: Sendable>(_ key: String, now: Date, compute: () async throws -> T) async throws -> (T, Date) {
        if let entry = entries.withLock({ $0[key] }), now.timeIntervalSince(entry.at) < maxAge, now >= entry.at, let value = entry.value as? T {
            return (value, entry.at)
        }
        let value = try await compute()
        entries.withLock { $0[key] = (now, value) }
        return (value, now)
    }
}
