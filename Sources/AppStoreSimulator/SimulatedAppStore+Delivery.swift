import AppStoreWire
import Foundation

/// Apple's side of notification delivery: which sends are due, their outcomes, retries on Apple's schedule
/// (measured on the simulator's clock), injected faults, and notification history.
extension SimulatedAppStore {
    /// Sets delivery faults (duplicates, reordering, drops, failures).
    public func setDeliveryFaults(_ faults: DeliveryFaults) { deliveryFaults = faults }

    /// The current delivery faults.
    public var currentDeliveryFaults: DeliveryFaults { deliveryFaults }

    /// Takes the sends due now, applying the faults: drops are recorded as failed with no retry, forced failures
    /// are recorded and rescheduled, and the rest are returned for the caller to send (twice when duplicating).
    public func takeDueDeliveries() -> [DueDelivery] {
        var due: [DueDelivery] = []
        for notification in notifications {
            let uuid = notification.notificationUUID
            guard var record = deliveries[uuid], let next = record.nextAttempt, next <= now else { continue }
            if deliveryFaults.dropNext > 0 {
                deliveryFaults.dropNext -= 1
                record.attempts.append(SendAttemptItem(attemptDate: now, sendAttemptResult: .noResponse))
                record.nextAttempt = nil
                deliveries[uuid] = record
                continue
            }
            if deliveryFaults.failNext > 0 {
                deliveryFaults.failNext -= 1
                deliveries[uuid] = record
                recordDelivery(notificationUUID: uuid, result: .timedOut)
                continue
            }
            // In flight: not handed out again until its outcome is recorded.
            record.nextAttempt = nil
            deliveries[uuid] = record
            due.append(DueDelivery(notificationUUID: uuid, signedPayload: notification.signedPayload))
            if deliveryFaults.duplicate {
                due.append(DueDelivery(notificationUUID: uuid, signedPayload: notification.signedPayload))
            }
        }
        return deliveryFaults.outOfOrder ? due.reversed() : due
    }

    /// Records a send attempt's outcome; a failure is retried on Apple's schedule until the retries run out.
    public func recordDelivery(notificationUUID uuid: String, result: SendAttemptResult) {
        guard var record = deliveries[uuid] else { return }
        // A duplicate send of something already delivered adds nothing.
        if record.delivered { return }
        record.attempts.append(SendAttemptItem(attemptDate: now, sendAttemptResult: result))
        if result == .success {
            record.nextAttempt = nil
        } else {
            let retries = record.attempts.count - 1
            record.nextAttempt = retries < DeliveryRecord.retrySchedule.count ? now + DeliveryRecord.retrySchedule[retries] : nil
        }
        deliveries[uuid] = record
    }

    /// A notification by UUID.
    public func notification(uuid: String) -> SimulatedNotification? { notifications.first { $0.notificationUUID == uuid } }

    /// Marks a send as not applicable (no V1 form): nothing is sent and nothing is retried.
    public func skipDelivery(notificationUUID uuid: String) { deliveries[uuid]?.nextAttempt = nil }

    /// The send attempts of one notification.
    public func sendAttempts(notificationUUID uuid: String) -> [SendAttemptItem] { deliveries[uuid]?.attempts ?? [] }

    /// Get Notification History: the last 180 days, filtered as Apple filters, oldest first.
    public func notificationHistory(_ request: NotificationHistoryRequest) throws -> [NotificationHistoryResponseItem] {
        guard request.startDate <= request.endDate else { throw SimulatorError.notAllowed("startDate is after endDate") }
        guard request.startDate >= now - 180 * 86_400 else {
            throw SimulatorError.notAllowed("startDate is more than 180 days in the past")
        }
        return notifications.compactMap { notification in
            guard let signed = notification.payload.signedDate, signed >= request.startDate, signed < request.endDate
            else { return nil }
            if let type = request.notificationType, notification.type != type { return nil }
            if let subtype = request.notificationSubtype, notification.subtype != subtype { return nil }
            if let transactionId = request.transactionId ?? request.originalTransactionId {
                let ids = notificationTransactionIds[notification.notificationUUID] ?? []
                guard ids.contains(transactionId) else { return nil }
            }
            let record = deliveries[notification.notificationUUID]
            // onlyFailures includes notifications still being retried.
            if request.onlyFailures == true, record?.delivered ?? false { return nil }
            return NotificationHistoryResponseItem(
                signedPayload: notification.signedPayload,
                sendAttempts: record?.attempts ?? [],
                firstSendAttemptResult: record?.attempts.first?.sendAttemptResult
            )
        }
    }
}
