import Foundation
import Testing

@testable import StorekeeperServer

/// Console sign-in is throttled per operator and per address, and the name field is never logged as typed (issue 30,
/// items 21 and 24).
@Suite("Console: sign-in throttling")
struct ConsoleSignInThrottleTests {
    @Test("five wrong secrets lock the operator out, the right secret included; another operator from elsewhere is not")
    func lockout() async throws {
        try await ServerHarness.run(.sqlite, configure: ConsoleTests.configure) { server in
            try await ConsoleTests.browse(server) { attacker in
                for _ in 0..<5 {
                    let wrong = try await attacker.signIn("ada", "wrong-secret-0123456789abc")
                    #expect(wrong.status == 401)
                }
                let locked = try await attacker.signIn("ada", ConsoleTests.operators[2].2)
                #expect(locked.status == 429 && locked.text.contains("Too many wrong secrets"), "the right secret does not open a locked account")
                #expect(attacker.cookies["sk_console"] == nil)
                // The address is locked too: another operator's name from it is refused without a check.
                #expect(try await attacker.signIn("sam", ConsoleTests.operators[1].2).status == 429)
            }
        }
    }

    @Test("a successful sign-in clears the count")
    func successResets() async throws {
        try await ServerHarness.run(.sqlite, configure: ConsoleTests.configure) { server in
            try await ConsoleTests.browse(server) { browser in
                for round in 0..<2 {
                    for _ in 0..<4 {
                        let wrong = try await browser.signIn("vera", "wrong-secret-0123456789abc")
                        #expect(wrong.status == 401)
                    }
                    let right = try await browser.signIn("vera", ConsoleTests.operators[0].2)
                    #expect(right.status == 303, "round \(round): four are not five, and a success starts afresh")
                }
            }
        }
    }
}

/// The throttle's rules on a clock of its own.
@Suite struct SignInThrottleTests {
    @Test func failuresOutsideTheWindowDoNotCountAndALockoutEnds() {
        let throttle = SignInThrottle()
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        for minute in 0..<4 { #expect(throttle.failed(["k"], now: t0.addingTimeInterval(Double(minute) * 60)).isEmpty) }
        // The fifth, 20 minutes later: the first four are out of the 15-minute window.
        #expect(throttle.failed(["k"], now: t0.addingTimeInterval(20 * 60)).isEmpty)
        for second in 1...3 { #expect(throttle.failed(["k"], now: t0.addingTimeInterval(20 * 60 + Double(second))).isEmpty) }
        #expect(throttle.failed(["k"], now: t0.addingTimeInterval(20 * 60 + 4)) == ["k"])
        #expect(throttle.lockedUntil(["k"], now: t0.addingTimeInterval(21 * 60)) != nil)
        #expect(throttle.lockedUntil(["k"], now: t0.addingTimeInterval(36 * 60)) == nil, "a lockout lasts 15 minutes")
    }
}

/// The sign-in log never carries the name field as typed (issue 30, item 24).
@Suite struct SignInLogTests {
    @Test func onlyAConfiguredOperatorsNameIsLogged() {
        let configuration = ConsoleConfiguration(
            operators: ConsoleTests.operators.map { ConsoleConfiguration.Operator(name: $0.0, role: $0.1, secret: $0.2) }
        )
        #expect(ConsoleController.loggableName("ada", operators: configuration.operators) == "ada")
        #expect(ConsoleController.loggableName(ConsoleTests.operators[2].2, operators: configuration.operators) == "(not an operator)")
        #expect(ConsoleController.loggableName("Ada", operators: configuration.operators) == "(not an operator)", "byte for byte")
    }
}
