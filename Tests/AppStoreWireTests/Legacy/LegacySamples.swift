import Foundation

/// Hand-written legacy bodies in Apple's documented shapes (quoted values, a few real JSON numbers).
enum LegacySamples {
    static let verifyReceiptResponse = #"""
        {
          "status": 0,
          "environment": "Sandbox",
          "receipt": {
            "receipt_type": "ProductionSandbox",
            "adam_id": 0,
            "app_item_id": "1234567890",
            "bundle_id": "com.example.storekeeper",
            "application_version": "1.0",
            "download_id": 0,
            "version_external_identifier": 0,
            "receipt_creation_date": "2023-10-24 11:20:00 Etc/GMT",
            "receipt_creation_date_ms": "1698146400000",
            "receipt_creation_date_pst": "2023-10-24 04:20:00 America/Los_Angeles",
            "request_date": "2023-10-24 12:00:00 Etc/GMT",
            "request_date_ms": "1698148800000",
            "request_date_pst": "2023-10-24 05:00:00 America/Los_Angeles",
            "original_purchase_date": "2013-08-01 07:00:00 Etc/GMT",
            "original_purchase_date_ms": "1375340400000",
            "original_purchase_date_pst": "2013-08-01 00:00:00 America/Los_Angeles",
            "original_application_version": "1.0",
            "preorder_date": "2013-07-01 07:00:00 Etc/GMT",
            "preorder_date_ms": "1372662000000",
            "preorder_date_pst": "2013-07-01 00:00:00 America/Los_Angeles",
            "expiration_date": "2030-01-01 00:00:00 Etc/GMT",
            "expiration_date_ms": "1893456000000",
            "expiration_date_pst": "2029-12-31 16:00:00 America/Los_Angeles",
            "some_future_key": {"nested": [1, 2, 3]},
            "in_app": [
              {
                "quantity": "1",
                "product_id": "com.example.coins100",
                "transaction_id": "1000000000000001",
                "original_transaction_id": "1000000000000001",
                "purchase_date": "2023-10-20 10:00:00 Etc/GMT",
                "purchase_date_ms": "1697796000000",
                "purchase_date_pst": "2023-10-20 03:00:00 America/Los_Angeles",
                "original_purchase_date": "2023-10-20 10:00:00 Etc/GMT",
                "original_purchase_date_ms": "1697796000000",
                "original_purchase_date_pst": "2023-10-20 03:00:00 America/Los_Angeles",
                "is_trial_period": "false",
                "in_app_ownership_type": "PURCHASED"
              }
            ]
          },
          "latest_receipt": "MIIUVAYJKoZIhvcNAQcCoIIURTCCFEECAQEx",
          "latest_receipt_info": [
            {
              "quantity": "1",
              "product_id": "com.example.monthly",
              "transaction_id": "2000000000000002",
              "original_transaction_id": "2000000000000001",
              "purchase_date": "2023-10-01 10:00:00 Etc/GMT",
              "purchase_date_ms": "1696154400000",
              "purchase_date_pst": "2023-10-01 03:00:00 America/Los_Angeles",
              "original_purchase_date": "2023-09-01 10:00:00 Etc/GMT",
              "original_purchase_date_ms": "1693562400000",
              "original_purchase_date_pst": "2023-09-01 03:00:00 America/Los_Angeles",
              "expires_date": "2023-11-01 10:00:00 Etc/GMT",
              "expires_date_ms": "1698832800000",
              "expires_date_pst": "2023-11-01 03:00:00 America/Los_Angeles",
              "cancellation_date": "2023-10-05 10:00:00 Etc/GMT",
              "cancellation_date_ms": "1696500000000",
              "cancellation_date_pst": "2023-10-05 03:00:00 America/Los_Angeles",
              "cancellation_reason": "1",
              "web_order_line_item_id": "2000000044444444",
              "is_trial_period": "true",
              "is_in_intro_offer_period": "false",
              "is_upgraded": "true",
              "promotional_offer_id": "promo_winback",
              "offer_code_ref_name": "SPRING_CODES",
              "subscription_group_identifier": "20571234",
              "in_app_ownership_type": "FAMILY_SHARED",
              "app_account_token": "7e3fb20b-4cdb-47cc-936d-99d65f608138"
            }
          ],
          "pending_renewal_info": [
            {
              "auto_renew_product_id": "com.example.yearly",
              "auto_renew_status": "1",
              "expiration_intent": "2",
              "grace_period_expires_date": "2023-11-17 10:00:00 Etc/GMT",
              "grace_period_expires_date_ms": "1700215200000",
              "grace_period_expires_date_pst": "2023-11-17 02:00:00 America/Los_Angeles",
              "is_in_billing_retry_period": "1",
              "offer_code_ref_name": "SPRING_CODES",
              "original_transaction_id": "2000000000000001",
              "price_consent_status": "0",
              "price_increase_status": "1",
              "product_id": "com.example.monthly",
              "promotional_offer_id": "promo_winback"
            }
          ],
          "is-retryable": false
        }
        """#

    static let notificationV1 = #"""
        {
          "notification_type": "DID_CHANGE_RENEWAL_STATUS",
          "environment": "PROD",
          "password": "s3cr3t-shared-secret",
          "bid": "com.example.storekeeper",
          "bvrs": "42",
          "auto_renew_status": "false",
          "auto_renew_status_change_date": "2023-10-24 11:20:00 Etc/GMT",
          "auto_renew_status_change_date_ms": "1698146400000",
          "auto_renew_status_change_date_pst": "2023-10-24 04:20:00 America/Los_Angeles",
          "auto_renew_product_id": "com.example.monthly",
          "auto_renew_adam_id": "1499999999",
          "expiration_intent": 1,
          "original_transaction_id": "2000000000000001",
          "deprecation": "Mon, 5 Jun 2023 00:00:00 GMT",
          "unified_receipt": {
            "environment": "Production",
            "latest_receipt": "MIIUVAYJKoZIhvcNAQcCoIIURTCCFEECAQEx",
            "status": 0,
            "latest_receipt_info": [
              {
                "quantity": "1",
                "product_id": "com.example.monthly",
                "transaction_id": "2000000000000002",
                "original_transaction_id": "2000000000000001",
                "expires_date_ms": "1698832800000",
                "is_trial_period": "false"
              }
            ],
            "pending_renewal_info": [
              {
                "auto_renew_product_id": "com.example.monthly",
                "auto_renew_status": "0",
                "original_transaction_id": "2000000000000001",
                "product_id": "com.example.monthly"
              }
            ]
          }
        }
        """#
}
