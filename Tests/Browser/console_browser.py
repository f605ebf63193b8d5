#!/usr/bin/env python3
"""The operator console in a real headless Chromium (Debian's chromium and chromium-driver, Python selenium).

Run by ConsoleBrowserTests against a running server with data made through the simulator; the Swift test checks the
database afterwards. Every page is saved as a screenshot. Exits non-zero naming the step that failed.

    console_browser.py --url URL --operator NAME --secret SECRET --viewer NAME --viewer-secret SECRET \
        --transaction ID --apple-order ID --user ID --pending ID --dead ID --product ID --screenshots DIR \
        [--chromedriver PATH] [--chromium PATH]
"""
import argparse, os, sys, time

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
    driver = webdriver.Chrome(service=Service(executable_path=a.chromedriver), options=options)
    driver.set_page_load_timeout(30)
    step = "start"

    def check(condition, message):
        if not condition:
            shot("failed")
            raise SystemExit(f"{step}: {message}\n--- page {driver.current_url} ---\n{driver.find_element(By.TAG_NAME, 'body').text[:2000]}")

    def shot(name):
        driver.save_screenshot(os.path.join(a.screenshots, f"{name}.png"))

    def body():
        return driver.find_element(By.TAG_NAME, "body").text

    def submit(form_css, fields):
        form = driver.find_element(By.CSS_SELECTOR, form_css)
        for name, value in fields.items():
            field = form.find_element(By.NAME, name)
            field.clear()
            field.send_keys(value)
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

    def sign_in(name, secret):
        driver.get(a.url + "/admin")
        check(driver.current_url.endswith("/admin/login"), "an anonymous visit goes to the sign-in page")
        submit("form[action='/admin/login']", {"name": name, "secret": secret})
        check("Overview" in driver.title, "signed in, the overview is shown")

    try:
        step = "sign in"
        driver.get(a.url + "/admin/login")
        shot("login")
        sign_in(a.operator, a.secret)
        shot("overview")
        check(driver.find_element(By.CSS_SELECTOR, "svg.chart") is not None, "the overview draws its chart")

        step = "find by transaction id"
        driver.find_element(By.LINK_TEXT, "Find a customer").click()
        submit("form[action='/admin/find']", {"q": a.transaction})
        shot("find")
        check("transaction id" in body(), "found by transaction id")
        driver.find_element(By.LINK_TEXT, a.user).click()
        shot("customer")
        check(a.transaction in body(), "the customer page lists the transaction")
        check("Timeline" in body() and "wallet.credited" in body(), "the timeline shows the delivery's credit")

        step = "find by Apple order id"
        driver.get(a.url + "/admin/find")
        submit("form[action='/admin/find']", {"q": a.apple_order})
        check("Apple order id" in body() and a.user in body(), "found through Apple's order look-up")

        step = "entitlements at a past moment"
        driver.get(a.url + f"/admin/customers/{a.user}?at=2020-01-01T00:00")
        shot("customer-at-moment")
        check("Entitlements at 2020-01-01" in body(), "the moment is shown")

        step = "adjust the wallet"
        driver.get(a.url + f"/admin/customers/{a.user}")
        submit(f"form[action='/admin/customers/{a.user}/wallet']", {"amount": "40", "reason": "browser goodwill"})
        shot("customer-adjusted")
        check("Adjusted; the balance is" in body(), "the adjustment is confirmed")

        step = "retry a dead letter"
        driver.find_element(By.LINK_TEXT, "Notifications").click()
        shot("notifications")
        driver.find_element(By.CSS_SELECTOR, f"button[data-retry='{a.dead}']").click()
        shot("notifications-retried")
        check(f"Notification {a.dead} is queued again" in body(), "the retry is confirmed")

        step = "assign a pending purchase"
        driver.find_element(By.LINK_TEXT, "Pending purchases").click()
        shot("pending")
        submit(f"form[action='/admin/pending/{a.pending}/assign']", {"userId": a.user, "reason": "receipt from e-mail"})
        shot("pending-assigned")
        check(f"Transaction {a.pending} was delivered to {a.user}" in body(), "the assignment is confirmed")

        step = "edit a product"
        driver.find_element(By.LINK_TEXT, "Catalog").click()
        shot("catalog")
        check(len(driver.find_elements(By.CSS_SELECTOR, "main img")) == 0, "a product id holding markup is text, not an element")
        driver.get(a.url + f"/admin/catalog/products/{a.product}")
        shot("product")
        submit(f"form[action='/admin/catalog/products/{a.product}']", {"coins": "90"})
        shot("catalog-saved")
        check(f"Saved {a.product}" in body(), "the product is saved")

        step = "jobs"
        driver.find_element(By.LINK_TEXT, "Jobs").click()
        shot("jobs")
        driver.find_element(By.CSS_SELECTOR, "form[action='/admin/jobs/process-notifications/run'] button").click()
        check("process-notifications ran" in body(), "the job ran")

        step = "sign out"
        driver.find_element(By.CSS_SELECTOR, "form[action='/admin/logout'] button").click()
        check(driver.current_url.endswith("/admin/login"), "signed out")
        driver.get(a.url + f"/admin/customers/{a.user}")
        check(driver.current_url.endswith("/admin/login"), "the old session opens nothing")

        step = "a viewer cannot act"
        sign_in(a.viewer, a.viewer_secret)
        driver.get(a.url + f"/admin/customers/{a.user}")
        shot("customer-as-viewer")
        check(len(driver.find_elements(By.CSS_SELECTOR, f"form[action='/admin/customers/{a.user}/wallet']")) == 0, "no wallet form")
        driver.get(a.url + "/admin/pending")
        check(len(driver.find_elements(By.CSS_SELECTOR, "form[action^='/admin/pending/']")) == 0, "no assign form")
    finally:
        driver.quit()
    print(f"console in Chromium: every step passed; screenshots in {a.screenshots}")


if __name__ == "__main__":
    main()
