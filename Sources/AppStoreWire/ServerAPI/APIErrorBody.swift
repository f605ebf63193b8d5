/// The JSON body of an App Store Server API error (`{"errorCode": …, "errorMessage": …}`).
public struct APIErrorBody: Codable, Hashable, Sendable {
    /// The error code; absent on 401 (bad JWT), whose body is empty.
    public var errorCode: APIErrorCode?
    /// Apple's description of the error.
    public var errorMessage: String?

    public init(errorCode: APIErrorCode? = nil, errorMessage: String? = nil) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }
}
