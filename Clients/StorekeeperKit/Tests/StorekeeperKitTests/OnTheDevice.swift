import Testing

/// The suites that play the one simulated device (`SimulatedDevice` is process-wide, as StoreKit is): nested here so
/// they run one at a time.
@Suite(.serialized) enum OnTheDevice {}
