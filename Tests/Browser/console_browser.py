#!/usr/bin/env python3
"""The operator console in a real headless Chromium (Debian's chromium and chromium-driver, Python selenium).

Run by ConsoleBrowserTests against a running server with data made through the simulator; the Swift test checks the
database afterwards. Every page is saved as a screenshot. Exits non-zero naming the step that failed.

    console_browser.py --url URL --operator NAME --secret SECRET --viewer NAME --viewer-secret SECRET \
        --transaction ID --apple-order ID --user ID --pending ID --dead ID --product ID --screenshots DIR \
        [--chromedriver PATH] [--chromium PATH]
"""
import argparse, os, sys, tempfile, time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By


def main():
    p = argparse.ArgumentParser()
    for name in ["url", "operator", "secret", "viewer", "viewer-secret", "transaction", "apple-order", "user", "pending", "dead",
                 "product", "screenshots"]:
        p.add_argument("--" + name, required=True)
    p.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    p.add_argument("--chromium", default="/usr/bin/chromium")
    a = p.parse_args()
    os.makedirs(a.screenshots, exist_ok=True)
    options = webdriver.ChromeOptions()
    options.binary_location = a.chromium
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000"]:
        options.add_argument(flag)
    # A profile of its own: two browsers on one profile (the console's and the analytics' tests run in parallel) wait
    # on its lock.
    options.add_argument("--user-data-dir=" + tempfile.mkdtemp(prefix="storekeeper-chromium-"))
    driver = webdriver.Chrome(service=Service(executable_path=a.chromedriver), options=options)
    driver.set_page_load_timeout(30)
    step = "start"

    def check(condition, message):
        # A click returns before the next page has loaded: conditions given as functions are polled for 10 s.
        if callable(condition):
            deadline = time.time() + 10
            while True:
                try:
                    if condition():
                        return
                except Exception:
                    pass
                if time.time() > deadline:
                    condition = False
                    break
                time.sleep(0.1)
        if not condition:
            shot("failed")
            raise SystemExit(f"{step}: {message}\n--- page {driver.current_url} ---\n{driver.find_element(By.TAG_NAME, 'body').text[:2000]}")

    def shot(name):
        driver.save_screenshot(os.path.join(a.screenshots, f"{name}.png"))

    def body():
        return driver.find_element(By.TAG_NAME, "body").text

    def follow(link_text, title):
        driver.find_element(By.LINK_TEXT, link_text).click()
        check(lambda: driver.title.startswith(title), f"the {title} page opens")

    def submit(form_css, fields):
        form = driver.find_element(By.CSS_SELECTOR, form_css)
        for name, value in fields.items():
            field = form.find_element(By.NAME, name)
            field.clear()
            field.send_keys(value)
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

    def sign_in(name, secret):
        driver.get(a.url + "/admin")
        check(lambda: driver.current_url.endswith("/admin/login"), "an anonymous visit goes to the sign-in page")
        submit("form[action='/admin/login']", {"name": name, "secret": secret})
        check(lambda: "Overview" in driver.title, "signed in, the overview is shown")

    try:
        step = "sign in"
        driver.get(a.url + "/admin/login")
        shot("login")
        sign_in(a.operator, a.secret)
        shot("overview")
        check(driver.find_element(By.CSS_SELECTOR, "svg.chart") is not None, "the overview draws its chart")

        step = "find by transaction id"
        follow("Find a customer", "Find a customer")
        submit("form[action='/admin/find']", {"q": a.transaction})
        shot("find")
        check(lambda: "transaction id" in body(), "found by transaction id")
        follow(a.user, "Customer")
        shot("customer")
        check(lambda: a.transaction in body(), "the customer page lists the transaction")
        check(lambda: "Timeline" in body() and "wallet.credited" in body(), "the timeline shows the delivery's credit")

        step = "find by Apple order id"
        driver.get(a.url + "/admin/find")
        submit("form[action='/admin/find']", {"q": a.apple_order})
        check(lambda: "Apple order id" in body() and a.user in body(), "found through Apple's order look-up")

        step = "entitlements at a past moment"
        driver.get(a.url + f"/admin/customers/{a.user}?at=2020-01-01T00:00")
        shot("customer-at-moment")
        check(lambda: "Entitlements at 2020-01-01" in body(), "the moment is shown")

        step = "the customer page fits a laptop screen (1280 px)"
        driver.get(a.url + f"/admin/customers/{a.user}")
        wide = driver.execute_script(
            "return [...document.querySelectorAll('main .card')]"
            ".filter(c => c.scrollWidth > c.clientWidth + 1).map(c => (c.querySelector('h2') || c).textContent.trim().slice(0, 40))"
        )
        check(lambda: wide == [], f"no card scrolls sideways: {wide}")
        clipped = driver.execute_script(
            "return [...document.querySelectorAll('main button')]"
            ".filter(b => b.getBoundingClientRect().right > document.documentElement.clientWidth).map(b => b.textContent.trim())"
        )
        check(lambda: clipped == [], f"every button is on screen: {clipped}")

        step = "adjust the wallet"
        driver.get(a.url + f"/admin/customers/{a.user}")
        submit(f"form[action='/admin/customers/{a.user}/wallet']", {"amount": "40", "reason": "browser goodwill"})
        shot("customer-adjusted")
        check(lambda: "Adjusted; the balance is" in body(), "the adjustment is confirmed")

        step = "retry a dead letter"
        follow("Notifications", "Notifications")
        shot("notifications")
        driver.find_element(By.CSS_SELECTOR, f"button[data-retry='{a.dead}']").click()
        shot("notifications-retried")
        check(lambda: f"Notification {a.dead} is queued again" in body(), "the retry is confirmed")

        step = "assign a pending purchase"
        follow("Pending purchases", "Pending purchases")
        shot("pending")
        submit(f"form[action='/admin/pending/{a.pending}/assign']", {"userId": a.user, "reason": "receipt from e-mail"})
        shot("pending-assigned")
        check(lambda: f"Transaction {a.pending} was delivered to {a.user}" in body(), "the assignment is confirmed")

        step = "edit a product"
        follow("Catalog", "Catalog")
        shot("catalog")
        check(lambda: len(driver.find_elements(By.CSS_SELECTOR, "main img")) == 0, "a product id holding markup is text, not an element")
        driver.get(a.url + f"/admin/catalog/products/{a.product}")
        shot("product")
        submit(f"form[action='/admin/catalog/products/{a.product}']", {"coins": "90"})
        shot("catalog-saved")
        check(lambda: f"Saved {a.product}" in body(), "the product is saved")

        step = "jobs"
        follow("Jobs", "Jobs")
        shot("jobs")
        driver.find_element(By.CSS_SELECTOR, "form[action='/admin/jobs/process-notifications/run'] button").click()
        check(lambda: "process-notifications ran" in body(), "the job ran")

        step = "sign out"
        driver.find_element(By.CSS_SELECTOR, "form[action='/admin/logout'] button").click()
        check(lambda: driver.current_url.endswith("/admin/login"), "signed out")
        driver.get(a.url + f"/admin/customers/{a.user}")
        check(lambda: driver.current_url.endswith("/admin/login"), "the old session opens nothing")

        step = "a viewer cannot act"
        sign_in(a.viewer, a.viewer_secret)
        driver.get(a.url + f"/admin/customers/{a.user}")
        shot("customer-as-viewer")
        check(lambda: len(driver.find_elements(By.CSS_SELECTOR, f"form[action='/admin/customers/{a.user}/wallet']")) == 0, "no wallet form")
        driver.get(a.url + "/admin/pending")
        check(lambda: len(driver.find_elements(By.CSS_SELECTOR, "form[action^='/admin/pending/']")) == 0, "no assign form")
    finally:
        driver.quit()
    print(f"console in Chromium: every step passed; screenshots in {a.screenshots}")


if __name__ == "__main__":
    main()
