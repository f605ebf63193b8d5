import AppStoreWire
import Foundation

/// Family Sharing: members get their own FAMILY_SHARED copies of shareable purchases, and lose them with `REVOKE`.
extension SimulatedAppStore {
    /// Puts accounts into one family-sharing group; returns its id.
    @discardableResult
    public func createFamily(_ accountIds: [String]) throws -> String {
        let familyId = "family-\(generator.uuid().uuidString.prefix(8).lowercased())"
        for id in accountIds {
            guard accounts[id] != nil else { throw SimulatorError.unknownAccount(id) }
            accounts[id]?.familyId = familyId
        }
        return familyId
    }

    /// A member leaves the family: every purchase shared with them is revoked (`REVOKE`).
    public func leaveFamily(account accountId: String) throws {
        guard accounts[accountId] != nil else { throw SimulatorError.unknownAccount(accountId) }
        try revokeShared(where: { $0 == accountId })
        accounts[accountId]?.familyId = nil
    }

    func familyMembers(of purchaser: SimulatedAccount) -> [SimulatedAccount] {
        guard let family = purchaser.familyId else { return [] }
        return accountOrder.compactMap { accounts[$0] }.filter { $0.familyId == family && $0.id != purchaser.id }
    }

    /// Gives each family member their own copy of a shareable purchase.
    func shareWithFamily(_ purchased: JWSTransactionDecodedPayload, purchaser: SimulatedAccount) throws {
        guard let product = catalog.product(purchased.productId ?? "") else { return }
        for member in familyMembers(of: purchaser) {
            let id = newTransactionId()
            var copy = makeTransaction(
                id: id,
                originalId: id,
                product: product,
                account: member,
                purchaseDate: purchased.purchaseDate ?? now,
                originalPurchaseDate: purchased.originalPurchaseDate ?? now,
                expiresDate: purchased.expiresDate,
                reason: .purchase,
                token: nil,
                price: purchased.price ?? product.price
            )
            copy.inAppOwnershipType = .familyShared
            copy.offerType = purchased.offerType
            copy.offerDiscountType = purchased.offerDiscountType
            copy.offerPeriod = purchased.offerPeriod
            _ = try record(copy, account: member.id)
            sharedCopies[id] = purchased.originalTransactionId ?? purchased.transactionId ?? ""
            if product.kind == .autoRenewable, let source = subscriptions[purchased.originalTransactionId ?? ""] {
                let record = SubscriptionRecord(
                    originalTransactionId: id,
                    accountId: member.id,
                    groupId: source.groupId,
                    productId: source.productId,
                    autoRenewProductId: source.autoRenewProductId,
                    autoRenew: source.autoRenew,
                    state: source.state,
                    expiresDate: source.expiresDate,
                    latestTransactionId: id,
                    appAccountToken: nil,
                    expirationIntent: nil,
                    billingRetryStart: nil,
                    nextBillingCheck: nil,
                    graceExpires: nil,
                    renewals: 0,
                    discountedPeriodsLeft: 0,
                    offer: nil,
                    offerType: nil,
                    sharedFrom: source.originalTransactionId,
                    recentStart: source.recentStart
                )
                subscriptions[id] = record
                familyCopies[source.originalTransactionId, default: []].append(id)
                try notify(.subscribed, .initialBuy, transaction: copy, renewal: renewalInfo(record), status: .active)
            } else {
                try notify(.oneTimeCharge, nil, transaction: copy, renewal: nil, status: nil)
            }
        }
    }

    /// Carries a purchaser's renewal or expiry over to the members' copies.
    func mirrorToFamily(_ source: SubscriptionRecord) throws {
        guard let purchased = transactions[source.latestTransactionId], let product = catalog.product(source.productId)
        else { return }
        for memberId in (familyCopies[source.originalTransactionId] ?? []).sorted() {
            guard var copy = subscriptions[memberId], copy.sharedFrom == source.originalTransactionId,
                copy.state != .revoked, let member = accounts[copy.accountId], let latest = transactions[copy.latestTransactionId]
            else { continue }
            if source.state == .expired {
                copy.state = .expired
                copy.autoRenew = false
                copy.expirationIntent = source.expirationIntent
                subscriptions[memberId] = copy
                try notify(.expired, .voluntary, transaction: latest, renewal: renewalInfo(copy), status: .expired)
                continue
            }
            guard source.expiresDate != copy.expiresDate else { continue }
            let id = newTransactionId()
            var renewal = makeTransaction(
                id: id,
                originalId: memberId,
                product: product,
                account: member,
                purchaseDate: purchased.purchaseDate ?? now,
                originalPurchaseDate: latest.originalPurchaseDate ?? now,
                expiresDate: source.expiresDate,
                reason: .renewal,
                token: nil,
                price: purchased.price ?? product.price
            )
            renewal.inAppOwnershipType = .familyShared
            copy.productId = source.productId
            copy.expiresDate = source.expiresDate
            copy.latestTransactionId = id
            copy.state = .active
            subscriptions[memberId] = copy
            _ = try record(renewal, account: member.id)
            sharedCopies[id] = source.originalTransactionId
            try notify(.didRenew, nil, transaction: renewal, renewal: renewalInfo(copy), status: .active)
        }
    }

    /// Revokes the family copies held by accounts matching `member` (and, optionally, only those of one purchase).
    func revokeShared(where member: (String) -> Bool, source: String? = nil) throws {
        for id in transactionOrder {
            guard var copy = transactions[id], copy.inAppOwnershipType == .familyShared, copy.revocationDate == nil,
                let owner = transactionAccount[id], member(owner), source == nil || sharedCopies[id] == source
            else { continue }
            let originalId = copy.originalTransactionId ?? id
            // Only the current copy of a subscription is revoked; older periods are history.
            if let record = subscriptions[originalId], record.latestTransactionId != id { continue }
            copy.revocationDate = now
            copy.revocationType = .familyRevoke
            copy.revocationReason = .otherReason
            transactions[id] = copy
            modified(id)
            var status: SubscriptionStatus?
            var renewal: JWSRenewalInfoDecodedPayload?
            if var record = subscriptions[originalId] {
                record.state = .revoked
                record.autoRenew = false
                subscriptions[originalId] = record
                status = .revoked
                renewal = renewalInfo(record)
            }
            try notify(.revoke, nil, transaction: copy, renewal: renewal, status: status)
        }
    }
}
