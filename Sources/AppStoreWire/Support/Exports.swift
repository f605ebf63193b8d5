// The token and base64url implementation is shared with GooglePlayWire; AppStoreWire's users keep reaching it
// through this module, as before the move.
@_exported import WebTokens
