#!/bin/sh
echo "SKIP: not yet"; exit 77
