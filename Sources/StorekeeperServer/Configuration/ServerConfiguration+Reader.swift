import Configuration
import Foundation
import SystemPackage

extension ServerConfiguration {
    /// The configuration reader `serve` and `migrate` use: environment variables first, then the JSON file.
    ///
    /// In JSON, `apps` is the object that holds each app's keys (`{"apps": {"main": {"bundleId": …}}}`), so the
    /// app names are that object's keys unless the environment names them (`APPS`); `webhooks` the same way.
    public static func reader(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        file: String?
    ) async throws -> ConfigReader {
        var providers: [any ConfigProvider] = [EnvironmentVariablesProvider(environmentVariables: environment)]
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ConfigurationError.invalid("cannot read the configuration file \(file)")
            }
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw ConfigurationError.invalid("the configuration file \(file) is not a JSON object")
            }
            // Likewise `webhooks`: its keys name the endpoints unless the environment does (`WEBHOOKS`).
            var names: [AbsoluteConfigKey: ConfigValue] = [:]
            if let apps = object["apps"] as? [String: Any], environment["APPS"] == nil {
                names["apps"] = .init(.stringArray(apps.keys.sorted()), isSecret: false)
            }
            if let hooks = object["webhooks"] as? [String: Any], environment["WEBHOOKS"] == nil {
                names["webhooks"] = .init(.stringArray(hooks.keys.sorted()), isSecret: false)
            }
            if !names.isEmpty { providers.append(InMemoryProvider(values: names)) }
            providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(file)))
        }
        return ConfigReader(providers: providers)
    }
}
