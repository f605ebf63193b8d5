import AppStoreWire
import Foundation
import StorekeeperCore

/// The console's analytics charts, drawn on the server as SVG: no script, no framework, presentation attributes only
/// (the console's content security policy allows no inline style), readable at 1280 px. Every point links to the
/// subscriptions behind it.
enum AnalyticsSVG {
    static let palette = ["#2456c7", "#d0652f", "#2f9e6e", "#8a4fc7", "#c7a224", "#c72459", "#3aa3c2", "#6b6f7a"]

    /// A line chart (levels, ratios) or grouped bars (events), the previous range drawn grey behind, each point a
    /// link made by `link(period)`.
    static func chart(_ chart: AnalyticsChart, previous: AnalyticsChart?, link: (String) -> String) -> String {
        let width = 1120.0
        let height = 300.0
        let left = 78.0
        let right = 12.0
        let top = 14.0
        let bottom = 44.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let periods = chart.series.first?.points.map(\.period) ?? []
        let count = max(periods.count, 1)
        var values = chart.series.flatMap { $0.points.map(\.value) }
        values += previous?.series.flatMap { $0.points.map(\.value) } ?? []
        let maxValue = max(values.max() ?? 0, 0)
        let minValue = min(values.min() ?? 0, 0)
        let (low, high, step) = axis(min: minValue, max: maxValue)
        func y(_ value: Int64) -> Double { top + plotHeight * (1 - (Double(value) - low) / max(high - low, 1)) }
        let slot = plotWidth / Double(count)
        func x(_ index: Int) -> Double { left + slot * (Double(index) + 0.5) }
        var svg =
            "<svg class=\"analytics\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"\(escape(chart.metric.title))\" "
            + "font-family=\"system-ui, sans-serif\" font-size=\"11\">"
        // Grid and value labels.
        var tick = low
        while tick <= high + step / 2 {
            let ty = top + plotHeight * (1 - (tick - low) / max(high - low, 1))
            svg += "<line x1=\"\(f(left))\" x2=\"\(f(width - right))\" y1=\"\(f(ty))\" y2=\"\(f(ty))\" stroke=\"#e3e6ec\"/>"
            svg +=
                "<text x=\"\(f(left - 6))\" y=\"\(f(ty + 4))\" text-anchor=\"end\" fill=\"#5b6475\">\(escape(label(tick, unit: chart.metric.unit)))</text>"
            tick += step
        }
        // Period labels: about ten, evenly spread.
        let every = max(1, Int((Double(count) / 10).rounded(.up)))
        for (index, period) in periods.enumerated() where index % every == 0 {
            let text = chart.interval == .month ? String(period.prefix(7)) : String(period.dropFirst(5))
            svg += "<text x=\"\(f(x(index)))\" y=\"\(f(height - bottom + 16))\" text-anchor=\"middle\" fill=\"#5b6475\">\(escape(text))</text>"
        }
        let zero = y(0)
        if chart.metric.isBar {
            let groups = Double(max(chart.series.count, 1))
            let barWidth = max(1, slot * 0.8 / groups)
            if let previous {
                for series in previous.series.prefix(1) {
                    for (index, point) in series.points.enumerated() where index < count {
                        let top = min(y(point.value), zero)
                        svg +=
                            "<rect x=\"\(f(x(index) - slot * 0.45))\" y=\"\(f(top))\" width=\"\(f(slot * 0.9))\" height=\"\(f(abs(y(point.value) - zero)))\" "
                            + "fill=\"#e3e6ec\"><title>previous \(escape(point.period)): \(escape(label(point.value, unit: chart.metric.unit)))</title></rect>"
                    }
                }
            }
            for (seriesIndex, series) in chart.series.enumerated() {
                let color = palette[seriesIndex % palette.count]
                for (index, point) in series.points.enumerated() {
                    let bx = x(index) - slot * 0.4 + Double(seriesIndex) * barWidth
                    let top = min(y(point.value), zero)
                    svg +=
                        "<a href=\"\(escape(link(point.period)))\"><rect class=\"point\" x=\"\(f(bx))\" y=\"\(f(top))\" width=\"\(f(barWidth))\" "
                        + "height=\"\(f(max(abs(y(point.value) - zero), 0.5)))\" fill=\"\(color)\"><title>\(escape(tooltip(series.name, point, chart)))</title></rect></a>"
                }
            }
        } else {
            if let previous {
                for series in previous.series.prefix(1) {
                    let path = series.points.prefix(count).enumerated().map { "\(f(x($0.offset))),\(f(y($0.element.value)))" }.joined(separator: " ")
                    svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"#a9afbb\" stroke-width=\"1.5\" stroke-dasharray=\"5 4\"/>"
                }
            }
            for (seriesIndex, series) in chart.series.enumerated() {
                let color = palette[seriesIndex % palette.count]
                let path = series.points.enumerated().map { "\(f(x($0.offset))),\(f(y($0.element.value)))" }.joined(separator: " ")
                svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"/>"
                for (index, point) in series.points.enumerated() {
                    svg +=
                        "<a href=\"\(escape(link(point.period)))\"><circle class=\"point\" cx=\"\(f(x(index)))\" cy=\"\(f(y(point.value)))\" "
                        + "r=\"\(count > 120 ? 1.5 : 3)\" fill=\"\(color)\"><title>\(escape(tooltip(series.name, point, chart)))</title></circle></a>"
                }
            }
        }
        svg += "<line x1=\"\(f(left))\" x2=\"\(f(width - right))\" y1=\"\(f(zero))\" y2=\"\(f(zero))\" stroke=\"#9aa1ad\"/>"
        // Legend.
        var lx = left
        let legendY = height - 10
        var entries = chart.series.enumerated().map {
            (palette[$0.offset % palette.count], $0.element.name.isEmpty ? chart.metric.title : $0.element.name)
        }
        if previous != nil { entries.append(("#a9afbb", "previous period")) }
        for (color, name) in entries.prefix(10) {
            svg += "<rect x=\"\(f(lx))\" y=\"\(f(legendY - 9))\" width=\"10\" height=\"10\" fill=\"\(color)\"/>"
            svg += "<text x=\"\(f(lx + 14))\" y=\"\(f(legendY))\" fill=\"#1d2330\">\(escape(name))</text>"
            lx += 24 + Double(min(name.count, 40)) * 6.2
        }
        return svg + "</svg>"
    }

    /// The cohort triangle: one row per cohort, one cell per month of age, shaded by the share still subscribed;
    /// cells not complete yet are outlined only.
    static func cohortTriangle(_ cohorts: AnalyticsCohorts, ages: Int) -> String {
        let cell = 62.0
        let rowHeight = 26.0
        let left = 150.0
        let top = 24.0
        let rows = cohorts.rows
        let width = left + cell * Double(ages + 1) + 8
        let height = top + rowHeight * Double(max(rows.count, 1)) + 8
        var svg =
            "<svg class=\"cohorts\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"cohort retention\" "
            + "font-family=\"system-ui, sans-serif\" font-size=\"11\">"
        for age in 0...ages {
            svg +=
                "<text x=\"\(f(left + cell * Double(age) + cell / 2))\" y=\"16\" text-anchor=\"middle\" fill=\"#5b6475\">"
                + "\(age == 0 ? "start" : "month \(age)")</text>"
        }
        for (rowIndex, row) in rows.enumerated() {
            let ry = top + rowHeight * Double(rowIndex)
            svg += "<text x=\"4\" y=\"\(f(ry + 17))\" fill=\"#1d2330\">\(escape(row.cohort)) · \(row.subscribers)</text>"
            for age in 0...ages where age < row.active.count {
                let share = row.subscribers > 0 ? Double(row.active[age]) / Double(row.subscribers) : 0
                let complete = age < row.completeAges
                let cx = left + cell * Double(age)
                let fill = complete ? shade(share) : "#ffffff"
                svg +=
                    "<rect x=\"\(f(cx + 1))\" y=\"\(f(ry + 1))\" width=\"\(f(cell - 2))\" height=\"\(f(rowHeight - 2))\" fill=\"\(fill)\" "
                    + "stroke=\"\(complete ? "none" : "#d9dde5")\"><title>\(escape(row.cohort)), month \(age): \(row.active[age]) of \(row.subscribers) "
                    + "subscribed; realized LTV \(escape(ReportMoney.text(row.lifetimeValue[age]))) \(escape(cohorts.currency))"
                    + "\(complete ? "" : " (still filling)")</title></rect>"
                let text = String(format: "%.0f%%", share * 100)
                svg +=
                    "<text x=\"\(f(cx + cell / 2))\" y=\"\(f(ry + 17))\" text-anchor=\"middle\" fill=\"\(share > 0.55 && complete ? "#ffffff" : "#1d2330")\">"
                    + "\(text)</text>"
            }
        }
        return svg + "</svg>"
    }

    /// Blue, darker as the share grows.
    static func shade(_ share: Double) -> String {
        let s = min(max(share, 0), 1)
        let r = Int(236 - (236 - 36) * s)
        let g = Int(241 - (241 - 86) * s)
        let b = Int(251 - (251 - 199) * s)
        return String(format: "#%02x%02x%02x", r, g, b)
    }

    /// Round axis bounds and step for values in `[min, max]`.
    static func axis(min: Int64, max: Int64) -> (Double, Double, Double) {
        let span = Double(max - min)
        guard span > 0 else { return (Double(min), Double(min) + 4, 1) }
        let raw = span / 4
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        let low = floor(Double(min) / step) * step
        let high = ceil(Double(max) / step) * step
        return (low, high, step)
    }

    static func label(_ value: Double, unit: AnalyticsChartMetric.Unit) -> String { label(Int64(value), unit: unit) }

    /// A value as an axis or tooltip shows it: money in whole units with thousands, ratios as percentages.
    static func label(_ value: Int64, unit: AnalyticsChartMetric.Unit) -> String {
        switch unit {
        case .count: return grouped(value)
        case .milliunits:
            let units = Double(value) / 1000
            return abs(units) >= 1000 ? grouped(Int64(units.rounded())) : String(format: "%.2f", units)
        case .basisPoints: return String(format: "%.1f%%", Double(value) / 100)
        }
    }

    static func grouped(_ value: Int64) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0, index % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return (value < 0 ? "-" : "") + String(out.reversed())
    }

    static func tooltip(_ name: String, _ point: AnalyticsChart.Point, _ chart: AnalyticsChart) -> String {
        let money = chart.metric.unit == .milliunits ? " \(chart.currency)" : ""
        return "\(name.isEmpty ? "" : name + ", ")\(point.period): \(label(point.value, unit: chart.metric.unit))\(money)"
    }

    static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
