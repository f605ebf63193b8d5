import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// This process's CPU time and, on Linux, the machine's stolen time, so a benchmark can report work per item
/// alongside throughput: on a shared virtual machine throughput swings with the hypervisor, CPU per item does not.
public struct CPUUsage: Sendable {
    /// User plus system CPU time of this process, in seconds.
    public var processSeconds: Double
    /// Jiffies the hypervisor ran someone else while this machine wanted the CPU, and all jiffies (Linux `/proc/stat`).
    public var stealTicks: UInt64
    public var totalTicks: UInt64

    public static func now() -> CPUUsage {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        var steal: UInt64 = 0
        var total: UInt64 = 0
        if let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
        {
            // cpu user nice system idle iowait irq softirq steal guest guest_nice; guests are already in user.
            let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
            total = fields.prefix(8).reduce(0, +)
            steal = fields.count > 7 ? fields[7] : 0
        }
        return CPUUsage(
            processSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime),
            stealTicks: steal,
            totalTicks: total
        )
    }

    /// Stolen share of the machine's time between `earlier` and `self`, in percent (0 where unknown).
    public func stealPercent(since earlier: CPUUsage) -> Double {
        let total = totalTicks &- earlier.totalTicks
        return total == 0 ? 0 : Double(stealTicks &- earlier.stealTicks) * 100 / Double(total)
    }
}
