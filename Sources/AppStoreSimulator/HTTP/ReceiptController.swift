import AppStoreWire
import Foundation
import Hummingbird

/// The legacy receipt world: a device's PKCS#7 app receipt, and Apple's `verifyReceipt` on a production and a
/// sandbox path with Apple's status codes (21007 / 21008 across environments, any status injectable).
struct ReceiptController<Context: RequestContext>: Sendable {
    let store: SimulatedAppStore
    let identity: ReceiptSigningIdentity
    let sharedSecret: String?
    let faults: AppleEndpointFaults

    struct DeviceReceipt: Codable { var receiptData: String }

    func add(to router: some RouterMethods<Context>) {
        router.get("device/accounts/:account/receipt") { _, context in
            let account = try PathParameter.require("account", in: context)
            let receipt = try await SimulatorError.mapped { try await issue(for: account) }
            return try HTTPJSON.response(DeviceReceipt(receiptData: receipt.base64))
        }
        router.post("verifyReceipt") { request, _ in try await verify(request, endpoint: .production) }
        router.post("sandbox/verifyReceipt") { request, _ in try await verify(request, endpoint: .sandbox) }
    }

    /// The account's current receipt, as `appStoreReceiptURL` would hold it.
    func issue(for accountId: String) async throws -> AppReceiptBuilder.SignedReceipt {
        let contents = try await store.receiptContents(account: accountId)
        return try await builder(for: accountId).build(transactions: contents.transactions)
    }

    func builder(for accountId: String) async throws -> AppReceiptBuilder {
        await SimulatedDevice.receiptBuilder(for: accountId, store: store, identity: identity)
    }

    static func device(of accountId: String) -> [UInt8] { SimulatedDevice.identifier(of: accountId) }

    func verify(_ request: Request, endpoint: AppStoreEnvironment) async throws -> Response {
        let body: VerifyReceiptRequest
        do {
            body = try await HTTPJSON.decode(VerifyReceiptRequest.self, from: request)
        } catch {
            return try status(21000)
        }
        if let injected = faults.takeVerifyReceiptStatus() { return try status(injected) }
        guard let bytes = Data(base64Encoded: body.receiptData, options: .ignoreUnknownCharacters) else {
            return try status(21002)
        }
        let receipt: AppReceipt
        do {
            receipt = try await AppReceiptSignatureVerifier(trustedRoots: [identity.root]).verify(bytes)
        } catch {
            return try status(21003)
        }
        let receiptEnvironment: AppStoreEnvironment = receipt.receiptType?.hasSuffix("Sandbox") == true ? .sandbox : .production
        if receiptEnvironment != endpoint {
            return try status(receiptEnvironment == .sandbox ? 21007 : 21008)
        }
        guard let opaque = receipt.opaqueValue,
            let account = await store.accountIds().first(where: { Self.device(of: $0) == Array(opaque) })
        else { return try status(21010) }
        let contents = try await store.receiptContents(account: account)
        let subscribed = contents.transactions.contains { $0.type == .autoRenewable }
        if subscribed, let sharedSecret, body.password != sharedSecret { return try status(21004) }
        let response = try VerifyReceiptResponseBuilder(
            environment: endpoint,
            requestDate: await store.currentDate,
            excludeOldTransactions: body.excludeOldTransactions ?? false
        ).response(
            receipt: receipt,
            transactions: contents.transactions,
            renewalInfos: contents.renewals,
            latestReceiptBuilder: try await builder(for: account)
        )
        return try HTTPJSON.response(response)
    }

    /// A status-only answer, as Apple gives for errors (HTTP 200 with `status`).
    func status(_ code: Int) throws -> Response {
        var object: [String: Any] = ["status": code]
        if (21100...21199).contains(code) { object["is-retryable"] = true }
        let data = try JSONSerialization.data(withJSONObject: object, options: .sortedKeys)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: .init(bytes: data)))
    }
}
