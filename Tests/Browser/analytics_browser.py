#!/usr/bin/env python3
"""The console's analytics page in a real headless Chromium (Debian's chromium and chromium-driver, Python selenium).

Run by AnalyticsBrowserTests against a running server whose subscriptions were made through the simulator. Checks
the charts render as SVG with a point per bucket, the form changes metric, range and comparison, a point opens the
subscriptions behind it, the cohort triangle and CSV exports work, and the page fits 1280 px. Every step is saved as
a screenshot. Exits non-zero naming the step that failed.

    analytics_browser.py --url URL --operator NAME --secret SECRET --from DAY --to DAY --expect-mrr TEXT
        --screenshots DIR [--chromedriver PATH] [--chromium PATH]
"""
import argparse, os, sys, tempfile, time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select


def main():
    p = argparse.ArgumentParser()
    for name in ["url", "operator", "secret", "from", "to", "expect-mrr", "screenshots"]:
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

    def element_shot(css, name):
        driver.find_element(By.CSS_SELECTOR, css).screenshot(os.path.join(a.screenshots, f"{name}.png"))

    def body():
        return driver.find_element(By.TAG_NAME, "body").text

    def fits():
        return driver.execute_script("return document.documentElement.scrollWidth") <= 1280

    try:
        step = "sign in"
        driver.get(a.url + "/admin/login")
        form = driver.find_element(By.CSS_SELECTOR, "form[action='/admin/login']")
        form.find_element(By.NAME, "name").send_keys(a.operator)
        form.find_element(By.NAME, "secret").send_keys(a.secret)
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        check(lambda: "Overview" in driver.title, "signed in")

        step = "the MRR chart"
        driver.find_element(By.LINK_TEXT, "Analytics").click()
        check(lambda: driver.title.startswith("Analytics"), "the analytics page opens from the menu")
        driver.get(f"{a.url}/admin/analytics?metric=mrr&from={getattr(a, 'from')}&to={a.to}&interval=week")
        check(lambda: driver.find_elements(By.CSS_SELECTOR, "svg.analytics polyline"), "the MRR chart is a line")
        points = driver.find_elements(By.CSS_SELECTOR, "svg.analytics .point")
        check(len(points) >= 10, f"a point per week ({len(points)})")
        check(a.expect_mrr in body(), f"the MRR tile shows {a.expect_mrr}")
        check(fits(), "the page fits 1280 px")
        check("No exchange rate" not in body(), "no currency is said to lack a rate when none does")
        shot("analytics-mrr")
        element_shot("#chart", "analytics-mrr-chart")

        step = "another metric, compared with the period before"
        Select(driver.find_element(By.NAME, "metric")).select_by_value("new_subscriptions")
        Select(driver.find_element(By.NAME, "interval")).select_by_value("week")
        driver.find_element(By.NAME, "compare").click()
        driver.find_element(By.CSS_SELECTOR, "form.analytics-form button[type=submit]").click()
        check(lambda: "metric=new_subscriptions" in driver.current_url and "compare=on" in driver.current_url, "the form chose the metric")
        check(lambda: driver.find_elements(By.CSS_SELECTOR, "svg.analytics rect.point"), "new subscriptions are bars")
        check("previous period" in driver.find_element(By.CSS_SELECTOR, "svg.analytics").get_attribute("innerHTML"), "the legend names the previous period")
        shot("analytics-new-compared")

        step = "churn, both kinds"
        driver.get(f"{a.url}/admin/analytics?metric=churn&from={getattr(a, 'from')}&to={a.to}&interval=month")
        svg = driver.find_element(By.CSS_SELECTOR, "svg.analytics").get_attribute("innerHTML")
        check("voluntary" in svg and "involuntary" in svg, "churn shows voluntary and involuntary")
        shot("analytics-churn")

        step = "drill down from a point"
        driver.get(f"{a.url}/admin/analytics?metric=new_subscriptions&from={getattr(a, 'from')}&to={a.to}&interval=day")
        tall = [p for p in driver.find_elements(By.CSS_SELECTOR, "svg.analytics rect.point") if float(p.get_attribute("height")) > 1]
        check(tall, "a day with new subscriptions")
        driver.execute_script("arguments[0].parentNode.dispatchEvent(new MouseEvent('click', {bubbles: true}))", tall[0])
        check(lambda: driver.title.startswith("Behind the point"), "the point opens the subscriptions behind it")
        rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr td a[href^='/admin/customers/']")
        check(rows, "each subscription links to its customer")
        shot("analytics-contributors")
        rows[0].click()
        check(lambda: "/admin/customers/" in driver.current_url, "the customer page opens")

        step = "cohorts"
        driver.get(f"{a.url}/admin/analytics?metric=mrr&from={getattr(a, 'from')}&to={a.to}&interval=week")
        cells = driver.find_elements(By.CSS_SELECTOR, "svg.cohorts rect")
        check(len(cells) >= 13, f"the cohort triangle has cells ({len(cells)})")
        check("Realized lifetime value" in body(), "the LTV table is there")
        element_shot("#cohorts", "analytics-cohorts")

        step = "CSV"
        csv = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(document.querySelector('#chart a.csv').href).then(r => r.text()).then(done, e => done('error ' + e));")
        check(csv.startswith("metric,series,period,value,unit,currency,comparison"), f"the chart's CSV ({csv[:80]})")
        cohorts = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(document.querySelector('#cohorts a.csv').href).then(r => r.text()).then(done, e => done('error ' + e));")
        check(cohorts.startswith("cohort,age_months,subscribers"), f"the cohorts' CSV ({cohorts[:80]})")

        step = "a bad range"
        driver.get(f"{a.url}/admin/analytics?metric=mrr&from={a.to}&to={getattr(a, 'from')}")
        check("in order" in body(), "a backwards range is refused, saying why")
    finally:
        driver.quit()
    print("analytics pages checked")


main()
