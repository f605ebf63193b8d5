/// Moments a caller may name, in epoch milliseconds: 2000-01-01 to 2200-01-01. Anything outside is a mistake or an
/// attack, and every date conversion downstream stays far from overflow.
enum EpochMillis {
    static let range: ClosedRange<Int64> = 946_684_800_000...7_258_118_400_000
}
