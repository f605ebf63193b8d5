import Foundation
import NIOHTTP1
import StorekeeperAPI
import Testing

/// Guests as a client gets them: a server-issued id and a credential nobody can guess.
extension ServerHarness {
    /// A guest the server issued: its user id, its credential, and the headers that present it.
    struct Guest {
        let userId: String
        let token: String
        var headers: [(String, String)] { [("X-Storekeeper-Guest", token)] }
    }

    /// `POST /v1/guests`: a new guest, as an app's first launch asks for one.
    func newGuest(sourceLocation: SourceLocation = #_sourceLocation) async throws -> Guest {
        let guest = try await api().createGuest().created.body.json
        #expect(guest.userId.hasPrefix("guest:"), sourceLocation: sourceLocation)
        return Guest(userId: guest.userId, token: guest.token)
    }
}
