// UIKit's classes that StoreKit's sheets take, as opaque handles only: on Linux there is no UIKit, and the
// stand-in's sheets ignore where they are shown, so code that passes one compiles the same here and on iOS.

/// UIKit's scene (`UIScene`), as an opaque handle.
@MainActor open class UIScene {
    public init() {}
}

/// UIKit's window scene (`UIWindowScene`), as an opaque handle.
@MainActor open class UIWindowScene: UIScene {}

/// UIKit's view controller (`UIViewController`): only the path to its window's scene.
@MainActor open class UIViewController {
    public init(scene: UIWindowScene? = UIWindowScene()) { view = UIView(window: UIWindow(windowScene: scene)) }
    public var view: UIView!
}

/// UIKit's view (`UIView`): only its window.
@MainActor open class UIView {
    public init(window: UIWindow?) { self.window = window }
    open var window: UIWindow?
}

/// UIKit's window (`UIWindow`): only its scene.
@MainActor open class UIWindow: UIView {
    public init(windowScene: UIWindowScene?) {
        self.windowScene = windowScene
        super.init(window: nil)
    }
    open var windowScene: UIWindowScene?
}
