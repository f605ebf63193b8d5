import AppStoreWire
import Foundation
import Testing

/// Apple's late-2026 fields (reference §12): assigned purchases, multiseat subscriptions and their notifications,
/// retention offers — decoded as sent and encoded again without losing a key.
@Suite struct LateTwentySixModelTests {
    static func decode<T: Codable>(_ type: T.Type, _ json: String) throws -> (T, [String: Any]) {
        let value = try AppStoreJSON.makeDecoder().decode(type, from: Data(json.utf8))
        let object = try #require(try JSONSerialization.jsonObject(with: AppStoreJSON.makeEncoder().encode(value)) as? [String: Any])
        return (value, object)
    }

    @Test func aMultiseatPurchasersTransaction() throws {
        let (transaction, encoded) = try Self.decode(
            JWSTransactionDecodedPayload.self,
            """
            {"transactionId": "2000000100", "originalTransactionId": "2000000100", "productId": "com.example.teams.monthly",
             "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "quantity": 12, "price": 8325,
             "currency": "USD", "additionalTransactionReason": "SEAT_ADDITION",
             "multiSeatInfo": {"invitationManagement": "DEVELOPER", "revokedSeatQuantity": 2,
                "priceTiers": [{"tierPrice": 9990, "tierQuantity": 5}, {"tierPrice": 7140, "tierQuantity": 7}]}}
            """
        )
        #expect(transaction.multiSeatInfo?.invitationManagement == .developer)
        #expect(transaction.multiSeatInfo?.revokedSeatQuantity == 2)
        #expect(transaction.multiSeatInfo?.totalPrice == Int64(5 * 9990 + 7 * 7140))
        #expect(transaction.additionalTransactionReason == .seatAddition)
        let seats = try #require(encoded["multiSeatInfo"] as? [String: Any])
        #expect((seats["priceTiers"] as? [[String: Any]])?.count == 2)
        #expect(encoded["additionalTransactionReason"] as? String == "SEAT_ADDITION")
    }

    @Test func tiersThatOverflowHaveNoTotal() {
        let info = TransactionMultiSeatInfo(priceTiers: [.init(tierPrice: .max, tierQuantity: 2)])
        #expect(info.totalPrice == nil)
        #expect(TransactionMultiSeatInfo(priceTiers: [.init(tierPrice: -1, tierQuantity: 2)]).totalPrice == nil)
    }

    @Test func anAssignedTransactionAndItsRevocation() throws {
        let (transaction, encoded) = try Self.decode(
            JWSTransactionDecodedPayload.self,
            #"{"transactionId": "2000000101", "inAppOwnershipType": "ASSIGNED", "revocationType": "ASSIGNMENT_REVOKE", "revocationDate": 1795000000000}"#
        )
        #expect(transaction.inAppOwnershipType == .assigned)
        #expect(transaction.inAppOwnershipType?.isKnown == true)
        #expect(transaction.revocationType == .assignmentRevoke)
        #expect(encoded["inAppOwnershipType"] as? String == "ASSIGNED")
    }

    @Test func aRenewalWithFewerSeatsNext() throws {
        let (renewal, encoded) = try Self.decode(
            JWSRenewalInfoDecodedPayload.self,
            #"{"originalTransactionId": "2000000100", "renewalPrice": 9990, "renewalQuantity": 8, "multiSeatInfo": {"renewalPriceTiers": [{"tierPrice": 9990, "tierQuantity": 8}]}}"#
        )
        #expect(renewal.renewalQuantity == 8)
        #expect(renewal.multiSeatInfo?.renewalPriceTiers?.first?.tierQuantity == 8)
        #expect(encoded["renewalQuantity"] as? Int == 8)
    }

    @Test func seatNotifications() throws {
        let (unclaim, encoded) = try Self.decode(
            ResponseBodyV2DecodedPayload.self,
            """
            {"notificationType": "UNCLAIM_SEATS", "notificationUUID": "6f0c2a36-0000-4000-8000-000000000001", "version": "2.0",
             "unclaimInfo": {"unclaimSeatIds": ["0b1c0d5e-1111-4111-8111-111111111111"]},
             "data": {"bundleId": "com.example.teams", "environment": "Sandbox"}}
            """
        )
        #expect(unclaim.notificationType == .unclaimSeats)
        #expect(unclaim.unclaimInfo?.unclaimSeatIds == ["0b1c0d5e-1111-4111-8111-111111111111"])
        #expect((encoded["unclaimInfo"] as? [String: Any])?["unclaimSeatIds"] as? [String] == ["0b1c0d5e-1111-4111-8111-111111111111"])
        let (refund, _) = try Self.decode(ResponseBodyV2DecodedPayload.self, #"{"notificationType": "REFUND", "subtype": "SEATS"}"#)
        #expect(refund.subtype == .seats)
    }

    @Test func aRetentionOfferRenewal() throws {
        // WWDC26 session 309's example.
        let (transaction, _) = try Self.decode(
            JWSTransactionDecodedPayload.self,
            """
            {"transactionReason": "RENEWAL", "price": 0, "offerType": 5, "offerIdentifier": "Yoga_2026_cancel_free_3m",
             "offerDiscountType": "FREE_TRIAL", "offerPeriod": "P3M", "inAppOwnershipType": "PURCHASED"}
            """
        )
        #expect(transaction.offerType == .retention)
        #expect(transaction.offerType?.isKnown == true)
        #expect(transaction.offerIdentifier == "Yoga_2026_cancel_free_3m")
    }
}
