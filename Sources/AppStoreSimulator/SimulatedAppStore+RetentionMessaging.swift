import AppStoreTestSigning
import AppStoreWire
import Foundation

/// The Retention Messaging API: images and messages (approved at once in the sandbox, reviewed by an operator in
/// production), default messages, the realtime URL, and the realtime requests Apple signs and judges.
extension SimulatedAppStore {
    static func retentionError(_ status: Int, _ code: Int32, _ message: String) -> RetentionAPIError {
        RetentionAPIError(status: status, code: code, message: message)
    }

    /// What Apple's review decides for new content: the sandbox approves at once.
    var retentionReviewState: RetentionReviewState { environment == .production ? .pending : .approved }

    /// Upload Image: a PNG without transparency, 3840 px wide and 160–2160 px high, or 1024×1024 for a bullet.
    public func uploadRetentionImage(_ id: String, size: RetentionImageSize, png: Data) throws(RetentionAPIError) {
        guard UUID(uuidString: id) != nil else { throw Self.retentionError(400, 4_000_161, "Invalid request. The image identifier is invalid.") }
        guard size.isKnown else { throw Self.retentionError(400, 4_000_216, "Invalid request. The image's size is invalid.") }
        guard let header = PNGHeader(png), !header.hasAlpha else {
            throw Self.retentionError(400, 4_000_161, "Invalid request. The image is invalid.")
        }
        let fits =
            size == .bulletPoint
            ? header.width == 1_024 && header.height == 1_024 : header.width == 3_840 && (160...2_160).contains(header.height)
        guard fits else { throw Self.retentionError(400, 4_000_216, "Invalid request. The image's size is invalid.") }
        let key = id.lowercased()
        guard retention.images[key] == nil else { throw Self.retentionError(409, 4_090_000, "The image already exists.") }
        guard retention.images.count < RetentionMessagingState.maximumImages else {
            throw Self.retentionError(403, 4_030_014, "The maximum number of images is reached.")
        }
        retention.images[key] = .init(size: size, state: retentionReviewState)
    }

    /// Delete Image: refused while a message uses it.
    public func deleteRetentionImage(_ id: String) throws(RetentionAPIError) {
        let key = id.lowercased()
        guard retention.images[key] != nil else { throw Self.retentionError(404, 4_040_014, "Image not found.") }
        let used = retention.messages.values.contains {
            $0.body.image?.imageIdentifier.lowercased() == key || ($0.body.bulletPoints ?? []).contains { $0.imageIdentifier.lowercased() == key }
        }
        guard !used else { throw Self.retentionError(403, 4_030_019, "The image is in use by a message.") }
        retention.images[key] = nil
    }

    public func retentionImages() -> GetImageListResponse {
        GetImageListResponse(
            imageIdentifiers: retention.images.keys.sorted().map {
                .init(imageIdentifier: $0, imageState: retention.images[$0]!.state, imageSize: retention.images[$0]!.size)
            }
        )
    }

    /// Upload Message, with Apple's length and structure rules.
    public func uploadRetentionMessage(_ id: String, _ body: UploadMessageRequestBody) throws(RetentionAPIError) {
        guard UUID(uuidString: id) != nil else { throw Self.retentionError(400, 4_000_163, "Invalid request. The message identifier is invalid.") }
        typealias Limits = UploadMessageRequestBody
        guard !body.header.isEmpty, body.header.count <= Limits.maximumHeader else {
            throw Self.retentionError(400, 4_000_162, "Invalid request. The header is too long.")
        }
        guard !body.body.isEmpty, body.body.count <= Limits.maximumBody else {
            throw Self.retentionError(400, 4_000_163, "Invalid request. The body is too long.")
        }
        if let image = body.image {
            guard image.altText.count <= Limits.maximumAltText else {
                throw Self.retentionError(400, 4_000_175, "Invalid request. The alt text is too long.")
            }
            guard retention.images[image.imageIdentifier.lowercased()]?.size == .fullSize else {
                throw Self.retentionError(400, 4_000_216, "Invalid request. The message's image is unknown or not full size.")
            }
        }
        if body.headerPosition == .aboveImage, body.image == nil {
            throw Self.retentionError(400, 4_000_224, "Invalid request. A header above the image requires an image.")
        }
        let bullets = body.bulletPoints ?? []
        guard bullets.count <= Limits.maximumBullets else {
            throw Self.retentionError(400, 4_000_218, "Invalid request. The number of bullet points is too many.")
        }
        for bullet in bullets {
            guard bullet.text.count <= Limits.maximumBulletText else {
                throw Self.retentionError(400, 4_000_219, "Invalid request. A bullet point's text is too long.")
            }
            guard bullet.altText.count <= Limits.maximumAltText else {
                throw Self.retentionError(400, 4_000_175, "Invalid request. The alt text is too long.")
            }
            guard retention.images[bullet.imageIdentifier.lowercased()]?.size == .bulletPoint else {
                throw Self.retentionError(400, 4_000_216, "Invalid request. A bullet point's image is unknown or not bullet size.")
            }
        }
        let key = id.lowercased()
        guard retention.messages[key] == nil else { throw Self.retentionError(409, 4_090_001, "The message already exists.") }
        guard retention.messages.count < RetentionMessagingState.maximumMessages else {
            throw Self.retentionError(403, 4_030_016, "The maximum number of messages is reached.")
        }
        retention.messages[key] = .init(body: body, state: retentionReviewState)
    }

    public func deleteRetentionMessage(_ id: String) throws(RetentionAPIError) {
        guard retention.messages.removeValue(forKey: id.lowercased()) != nil else {
            throw Self.retentionError(404, 4_040_015, "Message not found.")
        }
    }

    public func retentionMessages() -> GetMessageListResponse {
        GetMessageListResponse(
            messageIdentifiers: retention.messages.keys.sorted().map { .init(messageIdentifier: $0, messageState: retention.messages[$0]!.state) }
        )
    }

    /// An operator's review of everything pending (production): approve or reject.
    public func reviewRetentionContent(approve: Bool) {
        let decision: RetentionReviewState = approve ? .approved : .rejected
        for key in retention.messages.keys where retention.messages[key]!.state == .pending { retention.messages[key]!.state = decision }
        for key in retention.images.keys where retention.images[key]!.state == .pending { retention.images[key]!.state = decision }
    }

    static func retentionLocaleIsValid(_ locale: String) -> Bool {
        let parts = locale.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let language = parts.first, (2...3).contains(language.count),
            language.allSatisfy({ $0.isASCII && $0.isLowercase })
        else { return false }
        return parts.dropFirst().allSatisfy { part in (2...4).contains(part.count) && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }

    /// Configure Default Message: a text message (image and bullets allowed), approved, for a subscription product.
    public func configureDefaultRetentionMessage(productId: String, locale: String, messageId: String) throws(RetentionAPIError) {
        guard catalog.product(productId)?.kind == .autoRenewable else { throw Self.retentionError(400, 4_000_023, "Invalid product id.") }
        guard Self.retentionLocaleIsValid(locale) else { throw Self.retentionError(400, 4_000_164, "Invalid request. Locale is invalid.") }
        guard let message = retention.messages[messageId.lowercased()] else { throw Self.retentionError(404, 4_040_015, "Message not found.") }
        guard message.state == .approved else { throw Self.retentionError(403, 4_030_017, "The message is not approved.") }
        let images = [message.body.image?.imageIdentifier].compactMap { $0 } + (message.body.bulletPoints ?? []).map(\.imageIdentifier)
        guard images.allSatisfy({ retention.images[$0.lowercased()]?.state == .approved }) else {
            throw Self.retentionError(403, 4_030_018, "An image of the message is not approved.")
        }
        retention.defaults["\(productId)|\(locale)"] = messageId.lowercased()
    }

    public func defaultRetentionMessage(productId: String, locale: String) throws(RetentionAPIError) -> String {
        guard catalog.product(productId) != nil else { throw Self.retentionError(400, 4_000_023, "Invalid product id.") }
        guard Self.retentionLocaleIsValid(locale) else { throw Self.retentionError(400, 4_000_164, "Invalid request. Locale is invalid.") }
        guard let id = retention.defaults["\(productId)|\(locale)"] else { throw Self.retentionError(404, 4_040_020, "Default message not found.") }
        return id
    }

    public func deleteDefaultRetentionMessage(productId: String, locale: String) throws(RetentionAPIError) {
        guard catalog.product(productId) != nil else { throw Self.retentionError(400, 4_000_023, "Invalid product id.") }
        guard Self.retentionLocaleIsValid(locale) else { throw Self.retentionError(400, 4_000_164, "Invalid request. Locale is invalid.") }
        retention.defaults["\(productId)|\(locale)"] = nil
    }

    /// Configure Realtime URL: https (or http on loopback, for local servers), at most 256 characters; production
    /// only after a performance test passed.
    public func configureRetentionRealtimeURL(_ url: String) throws(RetentionAPIError) {
        guard url.count <= RealtimeUrlRequest.maximumLength, let parsed = URL(string: url), let host = parsed.host,
            parsed.scheme == "https" || (parsed.scheme == "http" && (host == "127.0.0.1" || host == "localhost" || host == "::1"))
        else { throw Self.retentionError(400, 4_000_215, "Invalid request. The url is invalid.") }
        guard environment != .production || retention.performanceTestPassed else {
            // Apple tests the endpoint before production traffic goes to it: the test runs against this URL.
            retention.candidateURL = url
            throw Self.retentionError(403, 4_030_026, "A passing performance test is required first.")
        }
        retention.realtimeURL = url
    }

    public func retentionRealtimeURL() throws(RetentionAPIError) -> String {
        guard let url = retention.realtimeURL else { throw Self.retentionError(404, 4_040_021, "Realtime url not found.") }
        return url
    }

    public func deleteRetentionRealtimeURL() { retention.realtimeURL = nil }

    // MARK: Realtime requests

    /// One realtime request as Apple would send it now: the URL, the signed body, and the decoded payload. Throws
    /// when no URL is configured or the subscription is not an active one.
    public func realtimeRetentionRequest(
        originalTransactionId: String,
        locale: String,
        url: String? = nil
    ) throws -> (url: String, body: Data, payload: DecodedRealtimeRequestBody) {
        guard let target = url ?? retention.realtimeURL else {
            throw SimulatorError.notAllowed("no realtime URL is configured")
        }
        guard let subscription = subscriptions[originalTransactionId], subscription.sharedFrom == nil,
            subscription.state != .expired && subscription.state != .revoked
        else { throw SimulatorError.unknownTransaction(originalTransactionId) }
        let payload = DecodedRealtimeRequestBody(
            originalTransactionId: originalTransactionId,
            appAppleId: catalog.appAppleId,
            productId: subscription.productId,
            userLocale: locale,
            requestIdentifier: generator.uuid().uuidString.lowercased(),
            environment: environment,
            signedDate: now
        )
        let signed = try signer.sign(payload)
        let body = try JSONEncoder().encode(RealtimeRequestBody(signedPayload: signed))
        return (target, body, payload)
    }

    /// The default message for a product and locale, if one is configured.
    func defaultRetentionMessageId(productId: String, locale: String) -> String? { retention.defaults["\(productId)|\(locale)"] }

    /// Judges a developer's answer as Apple does (the offer's signature is checked by the caller, who holds the
    /// developer's keys) and records what the customer was shown.
    @discardableResult
    public func judgeRetentionAnswer(
        _ payload: DecodedRealtimeRequestBody,
        status: Int?,
        body: Data?,
        milliseconds: Double,
        offerCheck: (@Sendable (_ jws: String, _ productId: String, _ customerIds: Set<String>) -> String?)?
    ) -> RetentionDisplay {
        let original = payload.originalTransactionId ?? ""
        let productId = payload.productId ?? ""
        let locale = payload.userLocale ?? ""
        func fallback(_ reason: String) -> RetentionDisplay {
            RetentionDisplay(
                requestIdentifier: payload.requestIdentifier ?? "",
                originalTransactionId: original,
                locale: locale,
                shown: .defaultMessage(id: defaultRetentionMessageId(productId: productId, locale: locale)),
                failure: reason,
                milliseconds: milliseconds
            )
        }
        let display: RetentionDisplay = {
            guard let status else { return fallback("no response") }
            guard status == 200 else { return fallback("HTTP \(status)") }
            guard let body, let answer = try? JSONDecoder().decode(RealtimeResponseBody.self, from: body) else {
                return fallback("the body is not a RealtimeResponseBody")
            }
            guard answer.answerCount == 1 else { return fallback("the answer must hold exactly one of message, alternateProduct, promotionalOffer") }
            func approved(_ id: String, imageAllowed: Bool) -> String? {
                guard let message = retention.messages[id.lowercased()] else { return "message \(id) does not exist" }
                guard message.state == .approved else { return "message \(id) is not approved" }
                if !imageAllowed, message.body.image != nil || message.body.bulletPoints != nil {
                    return "message \(id) has an image or bullet points, which this answer does not allow"
                }
                return nil
            }
            func shown(_ what: RetentionDisplay.Shown) -> RetentionDisplay {
                RetentionDisplay(
                    requestIdentifier: payload.requestIdentifier ?? "",
                    originalTransactionId: original,
                    locale: locale,
                    shown: what,
                    failure: nil,
                    milliseconds: milliseconds
                )
            }
            if let message = answer.message {
                if let problem = approved(message.messageIdentifier, imageAllowed: true) { return fallback(problem) }
                return shown(.message(id: message.messageIdentifier.lowercased()))
            }
            if let alternate = answer.alternateProduct {
                if let problem = approved(alternate.messageIdentifier, imageAllowed: false) { return fallback(problem) }
                guard let current = catalog.product(productId), let other = catalog.product(alternate.productId),
                    other.kind == .autoRenewable, other.groupId == current.groupId, other.id != current.id
                else { return fallback("\(alternate.productId) is not another product of the subscription's group") }
                if alternate.billingPlanType == .monthly, other.monthlyCommitmentPrice == nil {
                    return fallback("\(alternate.productId) has no monthly billing plan")
                }
                return shown(
                    .alternateProduct(
                        messageId: alternate.messageIdentifier.lowercased(),
                        productId: other.id,
                        billingPlan: alternate.billingPlanType
                    )
                )
            }
            if let offer = answer.promotionalOffer {
                if let problem = approved(offer.messageIdentifier, imageAllowed: false) { return fallback(problem) }
                guard let jws = offer.promotionalOfferSignatureV2, offer.promotionalOfferSignatureV1 == nil else {
                    return fallback("only V2 promotional-offer signatures are checked by the simulator")
                }
                var customerIds = Set(transactions.values.filter { $0.originalTransactionId == original }.compactMap(\.transactionId))
                customerIds.insert(original)
                guard let check = offerCheck else { return fallback("the simulator has no developer keys to check the offer") }
                guard let offerId = check(jws, productId, customerIds) else { return fallback("the promotional offer's signature did not verify") }
                guard catalog.product(productId)?.promotionalOffers?.contains(where: { $0.id == offerId }) == true else {
                    return fallback("\(offerId) is not a promotional offer of \(productId)")
                }
                return shown(.promotionalOffer(messageId: offer.messageIdentifier.lowercased(), offerId: offerId))
            }
            return fallback("empty answer")
        }()
        retention.shown.append(display)
        return display
    }

    /// Every realtime request and what the customer saw, oldest first.
    public func retentionDisplays() -> [RetentionDisplay] { retention.shown }

    // MARK: Performance tests

    /// Initiate Performance Test: about an active, own (not family-shared) subscription, one test at a time.
    public func startRetentionPerformanceTest(originalTransactionId: String) throws(RetentionAPIError) -> PerformanceTestResponse {
        guard let target = retention.realtimeURL ?? retention.candidateURL else {
            throw Self.retentionError(400, 4_000_211, "Invalid request. No realtime url is configured.")
        }
        guard let transaction = transactions[originalTransactionId] else { throw Self.retentionError(400, 4_000_006, "Invalid transaction id.") }
        guard transaction.originalTransactionId == originalTransactionId else {
            throw Self.retentionError(400, 4_000_187, "Invalid request. The transaction ID provided is not an original transaction ID.")
        }
        guard let subscription = subscriptions[originalTransactionId], subscription.sharedFrom == nil else {
            throw Self.retentionError(400, 4_000_185, "Invalid request. Family Sharing transactions aren't supported by this endpoint.")
        }
        guard subscription.state == .active || subscription.state == .gracePeriod else {
            throw Self.retentionError(400, 4_000_211, "Invalid request. The subscription is not active.")
        }
        guard !retention.performanceTests.values.contains(where: { $0.result == .pending }) else {
            throw Self.retentionError(400, 4_000_213, "Invalid request. Existing performance test run.")
        }
        let id = generator.uuid().uuidString.lowercased()
        var config = Self.performanceTestConfig
        config.responseTimeThreshold = retention.responseLimit
        retention.performanceTests[id] = PerformanceTestResultResponse(
            config: config,
            target: target,
            result: .pending,
            successRate: 0,
            numPending: Int32(config.totalRequests ?? 0),
            responseTimes: nil,
            failures: [:]
        )
        return PerformanceTestResponse(config: config, requestId: id)
    }

    /// What the simulator's performance test sends and demands: 100 requests, 10 at a time, each answered within
    /// 700 ms, 95 % of them usable.
    static let performanceTestConfig = PerformanceTestConfig(
        maxConcurrentRequests: 10,
        totalRequests: 100,
        totalDuration: 60_000,
        responseTimeThreshold: 700,
        successRateThreshold: 95
    )

    /// How long Apple waits for a realtime answer (and a performance test allows), in milliseconds.
    public var retentionResponseLimit: Int64 { retention.responseLimit }

    /// Sets ``retentionResponseLimit`` (at least 1 ms).
    public func setRetentionResponseLimit(milliseconds: Int64) { retention.responseLimit = max(1, milliseconds) }

    public func finishRetentionPerformanceTest(_ id: String, result: PerformanceTestResultResponse) {
        retention.performanceTests[id] = result
        if result.result == .pass { retention.performanceTestPassed = true }
    }

    public func retentionPerformanceTest(_ id: String) throws(RetentionAPIError) -> PerformanceTestResultResponse {
        guard UUID(uuidString: id) != nil else { throw Self.retentionError(400, 4_000_212, "Invalid request id.") }
        guard let test = retention.performanceTests[id.lowercased()] else {
            throw Self.retentionError(404, 4_040_018, "Performance test run not found.")
        }
        return test
    }
}

/// The width, height and colour type of a PNG, read from its IHDR chunk.
struct PNGHeader {
    let width: Int
    let height: Int
    /// Colour types 4 and 6 carry alpha; a palette's transparency chunk (tRNS) counts too.
    let hasAlpha: Bool

    init?(_ data: Data) {
        let bytes = [UInt8](data.prefix(64 * 1024))
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count >= 33, Array(bytes[0..<8]) == signature, Array(bytes[12..<16]) == Array("IHDR".utf8) else { return nil }
        func be32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        width = be32(16)
        height = be32(20)
        let colourType = bytes[25]
        let tRNS = data.range(of: Data("tRNS".utf8)) != nil
        hasAlpha = colourType == 4 || colourType == 6 || tRNS
        guard width > 0, height > 0 else { return nil }
    }
}

/// Retention offers (late 2026): the customer about to cancel accepts the promotional offer the developer's realtime
/// answer showed, and the subscription renews at it as a retention offer (`offerType` 5).
extension SimulatedAppStore {
    /// The customer accepts the offer last shown for `originalTransactionId`: auto-renew stays (or goes back) on and
    /// the next renewals are charged at the offer, as `offerType` 5 with its `offerIdentifier` (`OFFER_REDEEMED`).
    public func acceptRetentionOffer(originalTransactionId: String) throws {
        guard var subscription = subscriptions[originalTransactionId], subscription.state == .active || subscription.state == .gracePeriod
        else { throw SimulatorError.notAllowed("\(originalTransactionId) is not an active subscription") }
        guard
            let shown = retention.shown.last(where: { $0.originalTransactionId == originalTransactionId && $0.failure == nil }),
            case .promotionalOffer(_, let offerId) = shown.shown
        else { throw SimulatorError.notAllowed("no retention offer was shown for \(originalTransactionId)") }
        guard let offer = catalog.product(subscription.autoRenewProductId)?.promotionalOffers?.first(where: { $0.id == offerId }) else {
            throw SimulatorError.notAllowed("\(offerId) is not an offer of \(subscription.autoRenewProductId)")
        }
        subscription.autoRenew = true
        subscription.offer = offer
        subscription.offerType = .retention
        subscription.discountedPeriodsLeft = offer.periodCount ?? 1
        subscription.offerIsForPendingChange = false
        subscriptions[originalTransactionId] = subscription
        guard let latest = transactions[subscription.latestTransactionId] else { return }
        try notify(.offerRedeemed, nil, transaction: latest, renewal: renewalInfo(subscription), status: subscription.state.status)
    }
}
